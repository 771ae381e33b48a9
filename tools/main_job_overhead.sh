#!/usr/bin/env bash
# The main job's cost with the confined, checked audit against the audit before it (the
# goal: within 10%), on the same workloads, one run after the other on a quiet machine.
#
#   bash tools/main_job_overhead.sh [OLD_COMMIT [NEW_COMMIT]]   (defaults 5f342dc, HEAD)
#
# The workloads are today's main job's (the dev suite of every task) that also exist at
# OLD_COMMIT, whose main job audited a different sample. Each side runs in its own clone
# with an empty reference cache, through the repository's .venv (the clone's own hf_eval
# comes first on the path), under /usr/bin/time -v; the logs and the reports go to
# /tmp/overhead-{old,new}.log and each clone's reports/.
set -euo pipefail
OLD=${1:-5f342dc}
NEW=${2:-HEAD}
ROOT=$(git rev-parse --show-toplevel)
PY=$ROOT/.venv/bin/python
rm -rf /tmp/overhead-old /tmp/overhead-new /tmp/hfc-old /tmp/hfc-new
git clone -q "$ROOT" /tmp/overhead-old && git -C /tmp/overhead-old checkout -q "$OLD"
git clone -q "$ROOT" /tmp/overhead-new && git -C /tmp/overhead-new checkout -q "$NEW"
mapfile -t UUIDS < <("$PY" - <<'PY'
import glob, json, subprocess
dev = set()
for path in glob.glob("/tmp/overhead-new/tasks/*.json"):
    dev |= set(json.load(open(path)).get("dev", []))
lines = subprocess.run(["git", "-C", "/tmp/overhead-old", "grep", "-h", "-o",
                        '"uuid": *"[0-9a-f-]*"', "HEAD", "--", "workloads"],
                       capture_output=True, text=True, check=True).stdout.splitlines()
print("\n".join(sorted(dev & {line.split('"')[-2] for line in lines})))
PY
)
echo "${#UUIDS[@]} workloads"
# The old command line takes --uuid once per workload; the new one a comma-separated list.
(cd /tmp/overhead-old && HF_EVAL_CACHE=/tmp/hfc-old /usr/bin/time -v "$PY" -m hf_eval audit \
  $(printf -- '--uuid %s ' "${UUIDS[@]}") > /tmp/overhead-old.log 2>&1)
(cd /tmp/overhead-new && HF_EVAL_CACHE=/tmp/hfc-new /usr/bin/time -v "$PY" -m hf_eval audit \
  --uuid "$(IFS=,; echo "${UUIDS[*]}")" > /tmp/overhead-new.log 2>&1)
grep -H -E "cases:|Elapsed|User time|System time" /tmp/overhead-old.log /tmp/overhead-new.log
