#!/usr/bin/env bash
# Report on the detached NATTEN build that natten_build.sh started; once it has finished,
# install the wheel into /tmp/site (where results/h200/tools/device_setup.sh puts the carried
# wheels) and run a smoke test on the GPU.
#
# Run from the repository root on the device:  bash results/h200/tools/natten_status.sh
# It prints one "natten_status:" line with the state (not-started, running, failed, built),
# the compilation units done out of the total, the elapsed time, and then, when built, the
# wheel's name, size and sha256 and the smoke test's lines. Exit status: 0 built and smoke
# test passed, 3 still running, 1 failed, 2 not started.
set -uo pipefail

PY=${NATTEN_PY:-python3}
WORK=${NATTEN_WORK:-/tmp/natten-build}
LOG=${NATTEN_LOG:-/tmp/natten-build.log}
SITE=${NATTEN_SITE:-/tmp/site}
REPO=$(pwd)

if [ ! -f "$WORK/env" ]; then
  echo "natten_status: not-started (no $WORK/env; run natten_build.sh)"; exit 2
fi
# shellcheck disable=SC1091
. "$WORK/env"
now=$(date +%s)
end=$now
[ -f "$WORK/finished" ] && end=$(cat "$WORK/finished")
elapsed=$(( end - started ))
src=$WORK/src/natten-0.21.7/csrc
# Units: every source the CMake glob compiles (generated kernels, torch bindings, natten.cpp).
total=$(find "$src/autogen/src" "$src/src" -name '*.cu' 2>/dev/null | wc -l)
total=$(( total + 1 ))
done_units=$(find "$WORK/cmake/CMakeFiles/natten.dir" -name '*.o' 2>/dev/null | wc -l)
compiling=$(pgrep -c -x cicc 2>/dev/null || true)
ptxas=$(pgrep -c -x ptxas 2>/dev/null || true)
avail=$(awk '/MemAvailable/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
state=running
rc=""
if [ -f "$WORK/rc" ]; then
  rc=$(cat "$WORK/rc")
  if [ "$rc" = 0 ]; then state=built; else state=failed; fi
elif ! kill -0 "$(cat "$WORK/pid" 2>/dev/null)" 2>/dev/null; then
  state=failed  # the build's shell is gone without writing rc (killed, or the machine recycled)
fi
echo "natten_status: $state mode=$mode workers=$workers units=$done_units/$total" \
  "elapsed=$((elapsed / 60))m$((elapsed % 60))s cicc=$compiling ptxas=$ptxas mem_avail_gb=$avail${rc:+ rc=$rc}"

case $state in
  running)
    grep -E '^\s*\[ *[0-9]+%\]' "$LOG" 2>/dev/null | tail -1
    exit 3 ;;
  failed)
    grep -n -E 'error|Error|FAILED|Killed' "$LOG" 2>/dev/null | head -20
    tail -20 "$LOG" 2>/dev/null
    exit 1 ;;
esac

wheel=$(ls "$WORK"/wheel/natten-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "natten_status: rc 0 but no wheel in $WORK/wheel"; exit 1; }
echo "wheel $(basename "$wheel") $(stat -c %s "$wheel") bytes sha256 $(sha256sum "$wheel" | cut -d' ' -f1)"
"$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$SITE" "$wheel" \
  || { echo "natten_status: pip install into $SITE failed"; exit 1; }
PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}" "$PY" "$REPO/results/h200/tools/natten_smoke.py"
