#!/usr/bin/env bash
# Call K (session 4, issue 11): the confined, checked timing path on the H200. The CUDA
# adversarial candidates and the sandbox's CUDA tests, then the audit (timed) of the
# preferred H200 solution of every definition on its first sample workload.
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
timeout 130 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py -k cuda \
  tests/test_sandbox.py > "$OUT/pytest-K.log" 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -4 "$OUT/pytest-K.log"
defs=$(ls definitions/*/*.json | xargs -n1 basename | sed 's/.json$//' | grep -v grouped_gemm | paste -sd,)
timeout 270 python3 -m hf_eval audit --device cuda --suite first --definitions "$defs" \
  --report "$OUT/results-K.jsonl" > "$OUT/audit-K.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; grep -E "│|report:" "$OUT/audit-K.log" | tail -25
python3 - "$OUT/results-K.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = {m: (round(v.get("median_ms", 0), 4), round(v.get("event_median_ms", 0), 4), v.get("iters"))
         for m, v in r.get("timing", {}).items() if "median_ms" in v}
    print(r["definition"][:34], r["solution"][:36], r["status"], (r.get("reason") or "")[:120], t)
PY
timeout 110 python3 -m hf_eval.benchmark --out "$OUT/bench" \
  --definitions noncausal_dense_attention_h32_d128 > "$OUT/bench-K.log" 2>&1
echo "bench rc=$? at $((SECONDS - start)) s"; tail -12 "$OUT/bench-K.log"
