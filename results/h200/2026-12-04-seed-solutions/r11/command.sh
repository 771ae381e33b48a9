#!/usr/bin/env bash
# NATTEN built on the device, then the four SGLang neighbourhood baselines on every sample
# workload (seed_solutions.sh). A second call with the same command (machine still warm)
# goes on where the first stopped: the build and finished reports are kept in /tmp.
set -u
S=$SECONDS
mkdir -p /tmp/seedna
git log -1 --format='commit %H' > /tmp/seedna/code.txt
[ -d /tmp/natten-build ] || NATTEN_WORKERS=16 bash results/h200/tools/natten_build.sh
while true; do
  bash results/h200/tools/natten_status.sh > /tmp/seedna/natten_status.txt 2>&1; rc=$?
  [ $rc = 3 ] || break
  [ $((SECONDS-S)) -gt 500 ] && break
  sleep 10
done
echo "natten status rc $rc at $((SECONDS-S)) s"; tail -12 /tmp/seedna/natten_status.txt
if [ $rc = 0 ]; then
  cp /tmp/natten-build.log /tmp/seedna/ 2>/dev/null
  left=$((570-(SECONDS-S)))
  [ $left -gt 30 ] && ONLY='^sglang_neighborhood' timeout $left bash results/h200/seed_solutions.sh /tmp/seedna
fi
echo "done at $((SECONDS-S)) s"
tar czf $OUT/seedna.tgz -C /tmp seedna
