#!/usr/bin/env bash
# The audit's time on the device machine (repository root), carry [".whl"]:
#   bash results/h200/timing.sh OUT_DIR [timing_accuracy.py options]
# Writes OUT_DIR/env.txt, OUT_DIR/accuracy.jsonl, OUT_DIR/accuracy.txt (the table) and
# OUT_DIR/clocks.csv (SM clock and power every 50 ms, unless SMI=0) and OUT_DIR/host.csv
# (the host's stall counters every 10 ms).
set -uo pipefail
OUT=${1:?OUT_DIR}; shift
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD HF_EVAL_CACHE=/tmp/hfc PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch",
torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'
  git log -1 --format='commit %H'; git status --short | head -20
} > "$OUT/env.txt" 2>&1
# the SM clock and the power every 50 ms meanwhile (a sustained loop clocks lower), unless
# SMI=0; the host's stall counters every 10 ms (results/h200/tools/host_sampler.py)
SMI_PID=
if [ "${SMI:-1}" != 0 ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv -lms 50 \
    > "$OUT/clocks.csv" 2>&1 &
  SMI_PID=$!
fi
python3 results/h200/tools/host_sampler.py --every-ms 10 > "$OUT/host.csv" 2>&1 &
HOST_PID=$!
python3 results/h200/timing_accuracy.py "$OUT" "$@" > "$OUT/accuracy.txt" 2>&1
echo "exit $?" >> "$OUT/accuracy.txt"
kill $SMI_PID $HOST_PID 2>/dev/null
tail -12 "$OUT/accuracy.txt"
