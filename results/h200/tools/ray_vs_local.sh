#!/usr/bin/env bash
# Ray against the local path on ONE H200 (about 3 minutes): the same units through the
# local path (`audit --device cuda`) and through `audit --ray --device cuda` (a local Ray
# started by the audit, one lane on the one GPU); cases per minute and overhead per case
# for each, and whether any case's status differs. Also the CUDA-only test that the
# per-GPU timing lock holds between this machine's processes and a Ray lane.
#
# Here, first: bash results/h200/tools/ray_wheels.sh   (fills the git-ignored .whl-ray/)
# Device call: one H200, carry [".whl", ".whl-ray"] (.whl: pydantic and its dependencies,
#   fla-core), command: bash results/h200/tools/ray_vs_local.sh
# Files back: local.jsonl, ray.jsonl, local.log, ray.log, pytest-ray.log, env.txt.
set -uo pipefail
source results/h200/tools/device_setup.sh   # .whl, PYTHONPATH=/tmp/site:$PWD, env.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl-ray/*.whl >/dev/null 2>&1 || { echo "ray wheels: install failed"; exit 1; }
# Multicast stays off on every kind (KINDS.md), also for the processes Ray starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c 'import ray; print("ray", ray.__version__, ray.__file__)' >> "$OUT/env.txt" 2>&1
# Default: the QSA index's 9 sample workloads (its first case took 10 s in call M, so the
# two runs fit the 3 minutes); DEFS=a,b for more.
DEFS=${DEFS:-qsa_index_topk_decode_qwen38_h4_d128_topk512_c4}
# Fresh references in both runs (no disk cache), the same selection, timed (not validation-only).
common=(--device cuda --suite sample --definitions "$DEFS" --no-reference-cache)

timeout 40 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py -k gpu_lock \
  > "$OUT/pytest-ray.log" 2>&1
echo "pytest (gpu lock) rc=$?"; tail -2 "$OUT/pytest-ray.log"

# Regenerate the selection's large sample tensors before either clock starts.
python3 - "$DEFS" <<'PY'
import sys
from hf_eval.dataset import open_dataset
ds = open_dataset(".")
for name in sys.argv[1].split(","):
    for row in ds.workloads[name]:
        ds.materialise_inputs(ds.definition(name), row, "cpu")
PY

run() {  # name, limit in seconds, extra flags...
  local name=$1 limit=$2; shift 2
  local t0 t1; t0=$(date +%s.%N)
  timeout "$limit" python3 -m hf_eval audit "${common[@]}" "$@" --report "$OUT/$name.jsonl" \
    > "$OUT/$name.log" 2>&1
  local rc=$?; t1=$(date +%s.%N)
  echo "$name rc=$rc wall=$(python3 -c "print(round($t1 - $t0, 2))")" | tee -a "$OUT/walls.txt"
}
run local 75
run ray 85 --ray
grep -h "^note: ray" "$OUT/ray.log"

python3 - "$OUT" <<'PY'
import json, re, sys
from pathlib import Path
out = Path(sys.argv[1])
walls = dict(re.findall(r"^(\w+) rc=\S+ wall=(\S+)$", (out / "walls.txt").read_text(), re.M))
rows, status = {}, {}
for name in ("local", "ray"):
    path = out / f"{name}.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []
    wall = float(walls[name])
    judged = sum(r.get("wall_seconds", 0.0) for r in recs)
    n = len(recs)
    status[name] = {(r["definition"], r["workload"], r["solution"]): r["status"] for r in recs}
    print(f"{name:5}  cases {n:3}  wall {wall:6.1f} s  cases/min {60 * n / wall:6.1f}  "
          f"judging {judged:6.1f} s  overhead/case {(wall - judged) / max(n, 1):5.2f} s  "
          f"passed {sum(r['status'] == 'PASSED' for r in recs)}")
    rows[name] = (n, wall, judged)
same = set(status["local"]) & set(status["ray"])
diff = sorted(k for k in same if status["local"][k] != status["ray"][k])
print(f"cases in both: {len(same)}; status differs: {len(diff)} {diff[:5]}")
if rows["local"][0] and rows["ray"][0]:
    per = [rows[k][1] / rows[k][0] for k in ("local", "ray")]
    print(f"ray - local, wall per case: {per[1] - per[0]:+.2f} s "
          f"({100 * (per[1] / per[0] - 1):+.0f}%)")
PY
