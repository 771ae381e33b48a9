# The machinery of a device session, sourced by docs/h200/tools/session<N>.sh (from session
# 8 on; sessions 5-7 kept their own copies, which are the records of what ran). A session
# script sets S (its folder under /tmp), PIECES (how many pieces the wheel tar is cut in,
# under .stage7/) and defines queue(), which prints one step per line:
#
#   name|seconds|needs|command        (needs: a step that must be done first, or -)
#
# then calls session_main "$@". What it provides:
#   stage K       copy piece K of the wheel tar to /tmp/stage (carry [".stage7/K"])
#   work BUDGET   install the wheels once, record the environment once, then run the queue's
#                 next steps, each under `timeout`, until BUDGET seconds are spent; a step
#                 that ends (whatever its status) is marked done in $S/done and skipped by
#                 later calls while the machine stays warm
# and, after either, copies the step files to $OUT (the device tool returns at most 8).
# Step commands run from the repository root; `hf_eval bench run` steps reuse the first
# step's measured ceilings.

TAR_SHA256=970a7fe633b27ea01493ccd83cd16864537dcf1ad9be832f6638ec85f95caabb  # session 5's tar
#: Files copied to $OUT after every call.
SESSION_FILES=(results.jsonl bench.jsonl log.txt env.txt ceilings.json)

session_stage() {
  cp ".stage7/$1/piece.$1" /tmp/stage/ && ls -la /tmp/stage
}

session_install() {
  [ -f "$S/installed" ] && return 0
  local pieces=()
  for k in $(seq 1 "$PIECES"); do pieces+=("/tmp/stage/piece.$k"); done
  cat "${pieces[@]}" > /tmp/stage/wheels.tar || return 1
  echo "$TAR_SHA256  /tmp/stage/wheels.tar" | sha256sum -c - || return 1
  mkdir -p /tmp/stage/w && tar xf /tmp/stage/wheels.tar -C /tmp/stage/w || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site /tmp/stage/w/*.whl || return 1
  touch "$S/installed"
}

session_environment() {
  export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD
  export PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
  [ -f "$S/env.txt" ] && return 0
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
      --format=csv; nproc
    python3 - <<'PY'
import importlib.metadata as md, sys, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "cudnn", torch.backends.cudnn.version())
for name in ("triton", "fla-core", "pydantic", "flash-attn-4", "flashinfer-python",
             "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13", "quack-kernels",
             "apache-tvm-ffi", "sgl-flash-mla", "natten"):
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        print(name, "-")
PY
  } > "$S/env.txt" 2>&1
}

session_work() {
  local budget=$1 name seconds needs command left t0 rc
  session_install || { echo "install failed"; return 1; }
  session_environment
  while IFS='|' read -r name seconds needs command; do
    [ -f "$S/done/$name" ] && continue
    if [ "$needs" != - ] && [ ! -f "$S/done/$needs" ]; then
      echo "# $name waits for $needs" | tee -a "$S/log.txt"; continue
    fi
    left=$((budget - (SECONDS - SESSION_START) - 15))
    if [ "$left" -lt 45 ]; then echo "# budget spent: stopping before $name"; break; fi
    [ "$seconds" -gt "$left" ] && seconds=$left
    if [[ $command == *"hf_eval bench run"* ]] && [ -f "$S/ceilings.json" ]; then
      command="$command --ceilings $S/ceilings.json"
    fi
    echo "# $name (limit ${seconds} s) at $((SECONDS - SESSION_START)) s: $command" \
      | tee -a "$S/log.txt"
    t0=$SECONDS
    timeout "$seconds" bash -c "$command" < /dev/null >> "$S/log.txt" 2>&1
    rc=$?
    touch "$S/done/$name"
    echo "# $name rc=$rc in $((SECONDS - t0)) s" | tee -a "$S/log.txt"
  done < <(queue)
}

session_main() {
  SESSION_START=$SECONDS
  mkdir -p "$S/done" /tmp/stage
  case "${1:-}" in
    stage) session_stage "$2" ;;
    work) session_work "$2" ;;
    *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
  local f
  for f in "${SESSION_FILES[@]}"; do
    [ -f "$S/$f" ] && [ -n "${OUT:-}" ] && cp "$S/$f" "$OUT/"
  done
  echo "$(basename "$0") $1 done at $((SECONDS - SESSION_START)) s"
  tail -25 "$S/log.txt" 2>/dev/null
  true
}
