#!/usr/bin/env bash
# Call I (session 3): fla-core's chunked GDN prefill with FP32 operands and FP32-accurate
# products (IEEE and TF32x3: the TF32 version was rejected for one sample's state), and
# the QSA indexer with a one-program-per-row bisection select:
#   1. validation-only audit of the new solutions on every sample workload;
#   2. benchmark shapes of the two definitions;
#   3. tile sweep of the select kernel (docs/h200/tools/sweep_i.json).
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
DEFS=gdn_prefill_qk4_v8_d128_k_last,qsa_index_topk_decode_qwen38_h4_d128_topk512_c4
SOL=fla_chunk_fp32_ieee_gdn_prefill_qk4_v8_d128,fla_chunk_fp32_tf32x3_gdn_prefill_qk4_v8_d128
SOL=$SOL,triton_score_bisect_select_qsa_index_h4
timeout 150 python3 -m hf_eval audit --device cuda --validation-only --solutions "$SOL" \
  --definitions "$DEFS" --report "$OUT/results.jsonl" > "$OUT/audit.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; grep -E "│|report:" "$OUT/audit.log" | tail -6
timeout 150 python3 -m hf_eval.benchmark --out "$OUT" --definitions "$DEFS" > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $((SECONDS - start)) s"; grep -v "^#" "$OUT/bench.log" | cut -c1-150
timeout 90 python3 docs/h200/tools/sweep.py docs/h200/tools/sweep_i.json --out "$OUT" \
  > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? at $((SECONDS - start)) s"; cut -c1-140 "$OUT/sweep.log"
