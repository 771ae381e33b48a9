#!/usr/bin/env bash
# DeepGEMM build, then the hybrid's 4 workloads not reached before and deepgemm n12288's 12.
set -u
S=$SECONDS
git log -1 --format='commit %H' > /tmp/code.txt
mkdir -p /tmp/seed
( time timeout 240 bash results/h200/deepgemm_build.sh ) > /tmp/seed/deepgemm_build.txt 2>&1
tail -3 /tmp/deepgemm_build.log >> /tmp/seed/deepgemm_build.txt
echo "build done at $((SECONDS-S)) s"; tail -4 /tmp/seed/deepgemm_build.txt
ONLY='^hybrid_bf16' timeout 150 bash results/h200/seed_solutions.sh /tmp/seed \
  --uuid 753f0915-737d-5c19-94e1-135c4a4ca1de,2540fe88-0423-51e7-9c51-d9b5e7c5c9d0,763b33e2-4e51-5d4b-ac75-200f6765c29c,bd2f8d72-9af7-5477-a8d1-7cd34e17342c
echo "hybrid done at $((SECONDS-S)) s"
ONLY='^deepgemm_bf16_n12288' timeout $((560-(SECONDS-S))) bash results/h200/seed_solutions.sh /tmp/seed
echo "n12288 done at $((SECONDS-S)) s"
cp /tmp/code.txt /tmp/seed/
tar czf $OUT/seed.tgz -C /tmp seed
grep -h '"status"' /tmp/seed/*.jsonl | python3 -c '
import sys, json, collections
c = collections.Counter()
for line in sys.stdin:
    r = json.loads(line); c[(r.get("solution"), r.get("status"))] += 1
print(c)'
