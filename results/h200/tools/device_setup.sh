# Sourced by engine_call.sh and ray_vs_local.sh on the device machine (repository root):
# installs the carried wheels of .whl (pydantic and its dependencies, fla-core; the runs of
# 2026-12-02 staged them with the libraries instead, and carried no .whl), sets the
# environment the harness needs, and writes the machine and package versions to
# $OUT/env.txt. results/h200/device_run.sh does the same for a queue of steps.
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl >/dev/null 2>&1 || exit 1
fi
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD
export PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
    --format=csv
  python3 -c 'import sys, torch, triton, fla, pydantic; print("python", sys.version.split()[0],
"torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
"triton", triton.__version__, "fla-core", fla.__version__, "pydantic", pydantic.__version__)'
} > "$OUT/env.txt" 2>&1
