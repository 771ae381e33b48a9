#!/usr/bin/env bash
# Call J (session 3): call I's audit again, in two steps with their own time limits (in
# call I the first fla chunk case spent the whole 150 s compiling and autotuning fla's
# kernels at IEEE FP32, so no case finished): the QSA bisection indexer first, then the
# IEEE FP32 fla chunk GDN prefill (TF32x3 timed the same in call I and is not re-audited).
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
timeout 60 python3 -m hf_eval audit --device cuda --validation-only \
  --solutions triton_score_bisect_select_qsa_index_h4 \
  --definitions qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 \
  --report "$OUT/results-qsa.jsonl" > "$OUT/audit-qsa.log" 2>&1
echo "audit qsa rc=$? at $((SECONDS - start)) s"; grep -E "│|report:" "$OUT/audit-qsa.log" | tail -3
timeout 270 python3 -m hf_eval audit --device cuda --validation-only \
  --solutions fla_chunk_fp32_ieee_gdn_prefill_qk4_v8_d128 \
  --definitions gdn_prefill_qk4_v8_d128_k_last \
  --report "$OUT/results-gdn.jsonl" > "$OUT/audit-gdn.log" 2>&1
echo "audit gdn rc=$? at $((SECONDS - start)) s"; grep -E "│|report:" "$OUT/audit-gdn.log" | tail -3
wc -l "$OUT"/results-*.jsonl
