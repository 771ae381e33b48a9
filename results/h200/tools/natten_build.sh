#!/usr/bin/env bash
# Start NATTEN 0.21.7's libnatten build for the H200 (sm_90a) in the background and return.
#
# Why detached: the build outlives one device call (10 min at most), and the machine keeps
# /tmp and its processes only while it stays warm, so the build runs under setsid while the
# other device work of the run goes on; results/h200/tools/natten_status.sh reports on it
# and installs the wheel once it is done. Nothing here reaches the network: the sdist (and,
# where the device's setuptools is too old, a setuptools wheel) travel in the ignored .natten/
# folder (carry [".natten"]), and pip builds with the device's own torch, cmake and nvcc.
#
# Run from the repository root on the device:  bash results/h200/tools/natten_build.sh
# Environment (all optional):
#   NATTEN_WORKERS  parallel compile jobs (default 16)
#   NATTEN_FULL=1   build the stock kernel set instead of the trimmed one (natten_trim.py)
#   NATTEN_PY       the Python with torch (default python3)
#   NATTEN_WORK     work folder (default /tmp/natten-build); the log is /tmp/natten-build.log
set -euo pipefail

SDIST_NAME=natten-0.21.7.tar.gz
SDIST_SHA256=8417236b74db079b2d23899ec8f77514fb2dc73d4bbd6b346a45b6967fc05ffb
REPO=$(pwd)
PY=${NATTEN_PY:-python3}
WORK=${NATTEN_WORK:-/tmp/natten-build}
LOG=${NATTEN_LOG:-/tmp/natten-build.log}
WORKERS=${NATTEN_WORKERS:-16}
MODE=trim
[ "${NATTEN_FULL:-0}" = 1 ] && MODE=full

fail() { echo "natten_build: $*" >&2; exit 2; }

[ -f "$REPO/.natten/$SDIST_NAME" ] || fail ".natten/$SDIST_NAME is missing (carry [\".natten\"])"
echo "$SDIST_SHA256  $REPO/.natten/$SDIST_NAME" | sha256sum -c --quiet - \
  || fail ".natten/$SDIST_NAME does not have sha256 $SDIST_SHA256"
if [ -f "$WORK/pid" ] && kill -0 "$(cat "$WORK/pid")" 2>/dev/null; then
  fail "a build is already running (pid $(cat "$WORK/pid")); see natten_status.sh"
fi
command -v cmake >/dev/null || fail "cmake is not on PATH"
NVCC=$(command -v nvcc || true)
[ -n "$NVCC" ] || NVCC=/usr/local/cuda/bin/nvcc
[ -x "$NVCC" ] || fail "nvcc not found (PATH or /usr/local/cuda/bin)"
"$PY" -c 'import torch; assert torch.version.cuda, "torch has no CUDA"' \
  || fail "$PY cannot import a CUDA build of torch"

rm -rf "$WORK" && mkdir -p "$WORK/src" "$WORK/cmake" "$WORK/wheel" "$WORK/bin" "$WORK/tools"
tar -xzf "$REPO/.natten/$SDIST_NAME" -C "$WORK/src"
SRC=$WORK/src/natten-0.21.7
if [ "$MODE" = trim ]; then
  "$PY" "$REPO/results/h200/tools/natten_trim.py" "$SRC" > "$WORK/trim.log" || fail "trim failed"
  POLICY=trim
else
  POLICY=default
fi

# setup.py runs its kernel generators as a bare `python`, which the device may not have.
ln -s "$(command -v "$PY")" "$WORK/bin/python"
PYPATH_EXTRA=""
# pip builds through setuptools.build_meta, whose bdist_wheel is built in from setuptools
# 70.1 on; an older (or missing) setuptools is replaced by a carried wheel.
if ! "$PY" -c 'import setuptools, sys; sys.exit(tuple(map(int, setuptools.__version__.split(".")[:2])) < (70, 1))' 2>/dev/null; then
  wheel=$(ls "$REPO"/.natten/setuptools-*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || fail "the device's setuptools is missing or older than 70.1 and .natten/ has no setuptools wheel"
  "$PY" -m pip install -q --no-index --no-deps --target "$WORK/tools" "$wheel"
  PYPATH_EXTRA=$WORK/tools
fi
# torch's CUDA headers include cusparse.h and cublas_v2.h; where the toolkit lacks them, the
# CUDA wheels that torch depends on (nvidia/cu13/include) have them.
CPATH_EXTRA=""
CUDA_INC=$(dirname "$(readlink -f "$NVCC")")/../include
if [ ! -f "$CUDA_INC/cusparse.h" ]; then
  NV_INC=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "cu13", "include"))')
  [ -f "$NV_INC/cusparse.h" ] || fail "cusparse.h is in neither $CUDA_INC nor $NV_INC"
  CPATH_EXTRA=$NV_INC
fi

# Each compilation unit's wall and CPU time (and peak memory where /usr/bin/time exists) go
# to $WORK/units.txt through CMake's compiler-launcher hook: the record of what the build
# costs, unit by unit.
cat > "$WORK/bin/unit-timer" <<'TIMER'
#!/usr/bin/env bash
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
start=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f "%U %S %M" -o "$UNIT_TIMER_TMP.$$" "$@"; rc=$?
  read -r user sys rss_kb < "$UNIT_TIMER_TMP.$$"; rm -f "$UNIT_TIMER_TMP.$$"
else
  "$@"; rc=$?
  read -r user sys < <(times | tail -1 | sed 's/[ms]/ /g' | awk '{print $1 * 60 + $2, $3 * 60 + $4}')
  rss_kb=""
fi
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "${out#*natten.dir/} rc=$rc wall_s=$wall user_s=$user sys_s=$sys max_rss_kb=$rss_kb" >> "$UNIT_TIMER_LOG"
exit $rc
TIMER
chmod +x "$WORK/bin/unit-timer"

cat > "$WORK/env" <<EOF
mode=$MODE
policy=$POLICY
workers=$WORKERS
python=$(command -v "$PY")
nvcc=$NVCC
cpath_extra=$CPATH_EXTRA
setuptools_from=${PYPATH_EXTRA:-device}
started=$(date +%s)
EOF

# The detached build: pip wheel without build isolation (the device's torch) and without
# dependencies or an index (offline). NATTEN_BUILD_DIR keeps the CMake tree (and so the
# per-unit object files natten_status.sh counts) in $WORK/cmake.
join() { local IFS=:; local parts=(); for p in "$@"; do [ -n "$p" ] && parts+=("$p"); done; echo "${parts[*]}"; }
setsid nice -n 10 env \
  PATH="$WORK/bin:$PATH" \
  PYTHONPATH="$(join "$PYPATH_EXTRA" "${PYTHONPATH:-}")" \
  CPATH="$(join "$CPATH_EXTRA" "${CPATH:-}")" \
  CUDACXX="$NVCC" \
  CMAKE_CUDA_COMPILER_LAUNCHER="$WORK/bin/unit-timer" \
  CMAKE_CXX_COMPILER_LAUNCHER="$WORK/bin/unit-timer" \
  UNIT_TIMER_LOG="$WORK/units.txt" UNIT_TIMER_TMP="$WORK/unit-time" \
  NATTEN_CUDA_ARCH=9.0 \
  NATTEN_AUTOGEN_POLICY="$POLICY" \
  NATTEN_N_WORKERS="$WORKERS" \
  NATTEN_BUILD_DIR="$WORK/cmake" \
  bash -c '
    "$1" -m pip wheel -v --no-build-isolation --no-deps --no-index -w "$2/wheel" "$3" > "$4" 2>&1
    echo $? > "$2/rc"; date +%s > "$2/finished"
  ' natten-build "$PY" "$WORK" "$SRC" "$LOG" < /dev/null > /dev/null 2>&1 &
echo $! > "$WORK/pid"
echo "natten_build: started ($MODE kernels, policy $POLICY, $WORKERS workers), pid $(cat "$WORK/pid"), log $LOG"
