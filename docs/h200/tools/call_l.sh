#!/usr/bin/env bash
# Call L (session 4, issue 11): call K's checks again after its fixes (a CUDA device index
# for the worker, USER for Triton/fla under a uid without a passwd entry, judged subsets
# of long trials, the capture-only candidate), on four definitions.
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
timeout 110 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py -k cuda \
  > "$OUT/pytest-L.log" 2>&1
echo "pytest rc=$? at $((SECONDS - start)) s"; tail -4 "$OUT/pytest-L.log"
timeout 200 python3 -m hf_eval audit --device cuda --suite first --report "$OUT/results-L.jsonl" \
  --definitions noncausal_dense_attention_h32_d128,gdn_decode_qk4_v8_d128_k_last,qsa_index_topk_decode_qwen38_h4_d128_topk512_c4,neighborhood_attention_3d_h8_d64_kt3_ky5_kx5 \
  > "$OUT/audit-L.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"
python3 - "$OUT/results-L.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["definition"][:30], r["solution"][:34], r["status"], (r.get("reason") or "")[:100],
          r.get("wall_seconds"))
    for m, v in r.get("timing", {}).items():
        print("   ", m, {k: v.get(k) for k in ("median_ms", "event_median_ms", "bound_median_ms",
                                                "iters", "cupti", "phases_ms", "error")})
PY
