#!/usr/bin/env bash
# Call H (session 3): the sparse-MLA kernel with 128 keys per step (sweep G's winner) and
# 128-key splits for few rows: validation-only audit on every sample workload, benchmark
# shapes, and one more sweep variant (docs/h200/tools/sweep_h.json).
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
DEFS=sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640
SOL=triton_split_gather_sparse_mla_h64_k128,triton_split_gather_sparse_mla_h64_k640
timeout 120 python3 -m hf_eval audit --device cuda --validation-only --solutions "$SOL" \
  --definitions "$DEFS" --report "$OUT/results.jsonl" > "$OUT/audit.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; tail -3 "$OUT/audit.log"
timeout 90 python3 -m hf_eval.benchmark --out "$OUT" --definitions "$DEFS" > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $((SECONDS - start)) s"; cat "$OUT/bench.log"
timeout 90 python3 docs/h200/tools/sweep.py docs/h200/tools/sweep_h.json --out "$OUT" \
  > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? at $((SECONDS - start)) s"; cat "$OUT/sweep.log"
