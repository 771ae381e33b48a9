#!/usr/bin/env bash
# One device run on the H200: the steps of a queue file, each under `timeout`, run from the
# repository root on the device machine. What varies from run to run (which definitions and
# solutions, which steps, their limits, what waits for what) is in the queue file; the runs
# of 2026-11-29 to 2026-12-02 have theirs in results/h200/tools/queues/ (each run's README
# names its own).
#
#   bash results/h200/device_run.sh stage K [FROM]      copy piece K of the wheel tar,
#                                                       FROM/K/piece.K (FROM: .stage7), to
#                                                       /tmp/stage (carry [FROM/K])
#   bash results/h200/device_run.sh work BUDGET_S QUEUE install the wheels once, record the
#                                                       environment once, then run QUEUE's
#                                                       next steps until BUDGET_S seconds
#                                                       are spent
#
# Wheels: the carried .whl/ (pydantic and its dependencies, fla-core) is installed into
# /tmp/site if present; the staged tar (/tmp/stage/piece.1 ... piece.N, joined in order and
# checked against TAR_SHA256) likewise. QUEUE has one step a line ('#' lines and blank
# lines are skipped):
#
#   name|seconds|needs|command        (needs: a step that must be done first, or -)
#
# A command runs with `bash -c` from the repository root, so it may use $S (this run's
# state folder) and the environment set here. A step that ends, whatever its exit status,
# is marked done in $S/done and skipped by later calls while the machine stays warm (a
# fresh machine starts over; `touch $S/done/NAME` releases a step that needs NAME), except
# when it exits 75: not ready yet, asked again in the next call. Steps running
# `hf_eval bench run` reuse the first measured ceilings ($S/ceilings.json). After either
# command the run's files are copied to $OUT.
#
# Environment: S (this run's state folder, default /tmp/run), OUT (where the files go back),
# TAR_SHA256 (default: the tar of results/h200/2026-12-02-0232-library-engine-audits/wheels.txt).
set -uo pipefail
S=${S:-/tmp/run}
export S
TAR_SHA256=${TAR_SHA256:-970a7fe633b27ea01493ccd83cd16864537dcf1ad9be832f6638ec85f95caabb}
START=$SECONDS

stage() {
  local from=${2:-.stage7}
  cp "$from/$1/piece.$1" /tmp/stage/ && ls -la /tmp/stage
}

install() {
  [ -f "$S/installed" ] && return 0
  if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl > /dev/null 2>&1 || return 1
  fi
  if [ -f /tmp/stage/piece.1 ]; then
    local pieces=() k=1
    while [ -f "/tmp/stage/piece.$k" ]; do pieces+=("/tmp/stage/piece.$k"); k=$((k + 1)); done
    cat "${pieces[@]}" > /tmp/stage/wheels.tar || return 1
    echo "$TAR_SHA256  /tmp/stage/wheels.tar" | sha256sum -c - || return 1
    mkdir -p /tmp/stage/w && tar xf /tmp/stage/wheels.tar -C /tmp/stage/w || return 1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site /tmp/stage/w/*.whl || return 1
  fi
  touch "$S/installed"
}

environment() {
  export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD
  export PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
  [ -f "$S/env.txt" ] && return 0
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
      --format=csv; nproc
    nvidia-smi topo -m; lscpu | grep -i -e numa -e 'model name'
    echo "nvcc: $(command -v nvcc) ninja: $(command -v ninja) CUDA_HOME=${CUDA_HOME:-}"
    python3 - <<'PY'
import importlib.metadata as md, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version())
for name in ("triton", "fla-core", "pydantic", "flash-attn-4", "flashinfer-python",
             "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core",
             "nvidia-cutlass-dsl-libs-cu13", "quack-kernels", "apache-tvm-ffi",
             "torch-c-dlpack-ext", "cuda-tile", "cuda-bindings", "nccl4py",
             "nvidia-cudnn-frontend", "einops", "sgl-flash-mla", "natten"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "-")
PY
  } > "$S/env.txt" 2>&1
}

work() {
  local budget=$1 queue=$2 name seconds needs command left t0 rc
  [ -f "$queue" ] || { echo "no queue file $queue" >&2; return 2; }
  install || { echo "install failed"; return 1; }
  environment
  while IFS='|' read -r name seconds needs command; do
    [[ -z $name || $name == \#* ]] && continue
    [ -f "$S/done/$name" ] && continue
    if [ "$needs" != - ] && [ ! -f "$S/done/$needs" ]; then
      echo "# $name waits for $needs" | tee -a "$S/log.txt"; continue
    fi
    left=$((budget - (SECONDS - START) - 15))
    if [ "$left" -lt 45 ]; then echo "# budget spent: stopping before $name"; break; fi
    [ "$seconds" -gt "$left" ] && seconds=$left
    if [[ $command == *"hf_eval bench run"* ]] && [ -f "$S/ceilings.json" ]; then
      command="$command --ceilings $S/ceilings.json"
    fi
    echo "# $name (limit ${seconds} s) at $((SECONDS - START)) s: $command" | tee -a "$S/log.txt"
    t0=$SECONDS
    timeout "$seconds" bash -c "$command" < /dev/null >> "$S/log.txt" 2>&1
    rc=$?
    if [ "$rc" = 75 ]; then echo "# $name not ready: again next call" | tee -a "$S/log.txt"
    else touch "$S/done/$name"; fi
    echo "# $name rc=$rc in $((SECONDS - t0)) s" | tee -a "$S/log.txt"
  done < "$queue"
}

mkdir -p "$S/done" /tmp/stage
case "${1:-}" in
  stage) stage "${2:?piece number}" "${3:-}" ;;
  work) work "${2:?budget in seconds}" "${3:?queue file}" ;;
  *) sed -n '2,32p' "$0"; exit 2 ;;
esac
if [ -n "${OUT:-}" ]; then
  for f in "$S"/results*.jsonl "$S"/bench.jsonl "$S"/sweep.jsonl "$S"/log.txt "$S"/env*.txt \
      "$S"/ceilings.json "$S"/prebuild.* "$S"/ray.tar; do
    [ -f "$f" ] && cp "$f" "$OUT/"
  done
  [ -f /tmp/natten-build.log ] && tail -c 200000 /tmp/natten-build.log > "$OUT/natten-build.log"
fi
echo "device_run $1 done at $((SECONDS - START)) s"
tail -25 "$S/log.txt" 2>/dev/null
true
