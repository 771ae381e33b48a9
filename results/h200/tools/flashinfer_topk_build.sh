#!/usr/bin/env bash
# Build FlashInfer's top-k module ahead of time, detached, and copy it into the installed
# package's ahead-of-time directory, then mark DIR/done/topk_built (a queue's "needs" for
# the top-k steps; results/h200/device_run.sh). Without it, every fresh audit worker compiles
# the module in its private cache and a step of 300 s gives no line (the 2026-12-02 14:16
# run). Run from the repository root on the device, after the wheels' install:
#
#   bash results/h200/tools/flashinfer_topk_build.sh DIR      # returns at once; log DIR/prebuild.topk
#
# The 06:16 run's build took 1,108 s with 4 jobs beside NATTEN's; TOPK_JOBS (default 8) sets
# the jobs.
set -uo pipefail
dir=${1:?usage: flashinfer_topk_build.sh DIR}
[ -f "$dir/topk.started" ] && exit 0
mkdir -p "$dir/done" && touch "$dir/topk.started"
setsid nohup bash -c '
  dir=$1; t0=$(date +%s)
  FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=${TOPK_JOBS:-8} python3 -c "
from flashinfer.jit.topk import gen_topk_module
gen_topk_module().build_and_load()
print(\"built\")"
  rc=$?; echo "topk build rc=$rc in $(( $(date +%s) - t0 )) s"
  aot=$(python3 -c "import flashinfer.jit.env as e; print(e.FLASHINFER_AOT_DIR)")
  so=$(find /tmp/fiws -path "*cached_ops*" -name topk.so | head -1)
  if [ "$rc" = 0 ] && [ -n "$so" ]; then
    mkdir -p "$aot/topk" && cp "$so" "$aot/topk/topk.so" && echo "aot: $aot/topk/topk.so" \
      && touch "$dir/done/topk_built"
  fi
' topk-build "$dir" < /dev/null > "$dir/prebuild.topk" 2>&1 &
echo "flashinfer_topk_build: started, log $dir/prebuild.topk"
