#!/usr/bin/env bash
# The adversarial suite and the boundary's tests on the device machine (repository root):
#   bash results/h200/adversarial.sh OUT_DIR        (carry [".whl"]: pure wheels for the
#                                                   harness's own dependencies, cp312)
# Writes OUT_DIR/env.txt (machine, cgroups, namespaces, versions) and
# OUT_DIR/adversarial.txt and OUT_DIR/boundary.txt (pytest's reports).
set -uo pipefail
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD HF_EVAL_CACHE=/tmp/hfc PYTHONUNBUFFERED=1
{ date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cat /proc/self/cgroup; mount | grep -E "cgroup"
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch",
torch.__version__, "cuda", torch.version.cuda)'
  python3 -c 'from hf_eval.isolation import walls, limits
print("landlock abi", walls.landlock_abi(), "worker groups", limits.available())'
} > "$OUT/env.txt" 2>&1
# The adversarial candidates first (a call cut short by its limit keeps their report),
# then the boundary's own tests.
python3 -m pytest -q -p no:cacheprovider -rfEs tests/test_adversarial.py \
  > "$OUT/adversarial.txt" 2>&1
echo "pytest exit $?" >> "$OUT/adversarial.txt"
tail -15 "$OUT/adversarial.txt"
python3 -m pytest -q -p no:cacheprovider -rfEs tests/test_isolation.py tests/test_channel.py \
  tests/test_reveal.py > "$OUT/boundary.txt" 2>&1
echo "pytest exit $?" >> "$OUT/boundary.txt"
tail -10 "$OUT/boundary.txt"
