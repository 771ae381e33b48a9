#!/usr/bin/env bash
# Issue 12: the direct check of every FlashAttention-4 / FlashInfer solution on its
# definition's first sample workload (docs/h200/tools/library_smoke.py: PASS/FAIL/ERROR,
# max error, first-call seconds, warm milliseconds), with the environment recorded.
# Run as the tail of the last staging call of docs/h200/library-wheels.txt, after
# `source /tmp/stage/stage install`, or in a later call on the same warm machine (/tmp/site
# is kept while it stays warm). Argument: the smoke's time budget in seconds.
set -uo pipefail
start=$SECONDS
budget=${1:-480}
export PYTHONPATH="/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD" \
  PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
{ date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  echo "nvcc: $(command -v nvcc) ninja: $(command -v ninja) CUDA_HOME=${CUDA_HOME:-}"
  python3 - <<'PY'
import importlib.metadata as md
import sys

import torch

print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)
for dist in ("flash-attn-4", "flashinfer-python", "nvidia-cutlass-dsl",
             "nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core",
             "nvidia-cutlass-dsl-libs-cu13", "apache-tvm-ffi", "torch-c-dlpack-ext",
             "quack-kernels", "cuda-tile", "nccl4py", "nvidia-cudnn-frontend", "triton",
             "pydantic", "fla-core", "cuda-bindings", "einops"):
    try:
        print(dist, md.version(dist))
    except md.PackageNotFoundError:
        print(dist, "MISSING")
PY
} > "$OUT/env-lib.txt" 2>&1
cat "$OUT/env-lib.txt"
timeout $((budget + 30)) python3 docs/h200/tools/library_smoke.py "$budget" \
  > "$OUT/library-smoke.log" 2>&1
echo "smoke rc=$? at $((SECONDS - start)) s"
cat "$OUT/library-smoke.log"
