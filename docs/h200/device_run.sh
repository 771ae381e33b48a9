#!/usr/bin/env bash
# The device call behind docs/h200 (run from the repository root on the H200 machine, through
# the workplace's device tool, with the wheels in .whl carried: pydantic, pydantic-core,
# annotated-types, typing-inspection, typing_extensions, fla-core 0.6.0; the image has torch,
# triton, rich, safetensors, numpy). Everything lands in $OUT; docs/h200 holds copies.
#   usage: bash docs/h200/device_run.sh [AUDIT_TIMEOUT_S] [BENCH_TIMEOUT_S] [AUDIT_DEFS] [BENCH_DEFS]
#   (comma-separated definition names; empty = all). AUDIT_SOLUTIONS (environment) narrows the
#   audit to comma-separated solution names (default: all); AUDIT_FLAGS adds audit options
#   (e.g. --validation-only when the device time left does not allow timing the samples).
set -uo pipefail
audit_s=${1:-300}; bench_s=${2:-240}; audit_defs=${3:-}; bench_defs=${4:-}
source docs/h200/tools/device_setup.sh
cat "$OUT/env.txt"
sel=(); [ -n "$audit_defs" ] && sel=(--definitions "$audit_defs")
bsel=(); [ -n "$bench_defs" ] && bsel=(--definitions "$bench_defs")
# 1. every solution that runs here on every sample workload, the real audit runner
timeout "$audit_s" python3 -m hf_eval audit --device cuda --solutions "${AUDIT_SOLUTIONS:-all}" \
  --suite sample ${AUDIT_FLAGS:-} \
  "${sel[@]}" --report "$OUT/results.jsonl" > "$OUT/audit.log" 2>&1
echo "audit rc=$?"; grep -E "report:|cases" "$OUT/audit.log" | tail -3
# 2. ceilings, then every benchmark shape (inputs generated here, timing only)
timeout "$bench_s" python3 -m hf_eval bench run --out "$OUT" "${bsel[@]}" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -5 "$OUT/bench.log"
