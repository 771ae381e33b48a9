#!/usr/bin/env bash
# Wait up to LIMIT seconds (default 300) for the detached NATTEN build (natten_build.sh) to
# end, polling natten_status.sh, which installs the wheel into /tmp/site and runs the smoke
# test once the build is done. Prints the last status and exits 0, so that a queue step
# `natten_wait.sh 120; hf-eval bench run ...` times the other solutions even when NATTEN is
# not ready (its lines then say why: natten missing or without libnatten). With --again, a
# build still running at the limit exits 75 instead: results/h200/device_run.sh then asks
# the step again in its next call (LIMIT 0: look once).
#
#   bash results/h200/tools/natten_wait.sh [LIMIT_S] [--again]     # from the repository root
limit=${1:-300}
again=${2:-}
start=$SECONDS
while :; do
  status=$(bash results/h200/tools/natten_status.sh 2>&1)
  rc=$?
  if [ "$rc" != 3 ] || [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "$status"
    echo "natten_wait: status rc=$rc after $((SECONDS - start)) s"
    [ "$rc" = 3 ] && [ "$again" = --again ] && exit 75
    exit 0
  fi
  sleep 10
done
