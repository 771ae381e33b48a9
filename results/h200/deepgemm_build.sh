#!/usr/bin/env bash
# DeepGEMM built from source on the device machine (repository root), for the
# `deepgemm_bf16_*` and `hybrid_bf16_*` solutions on the H200:
#   bash results/h200/deepgemm_build.sh          (carry [".whl-dg", ".whl"])
# Why from source: every `sgl-deep-gemm` wheel (0.2.2, 0.2.3.post2, 0.2.5) references a
# symbol of a torch newer than the device's 2.11 (docs/seed-solutions.md), and the
# source of its extension is not published. Upstream DeepGEMM has the same
# `bf16_gemm_nt(a, b, d)` with an sm_90 kernel (sm90_bf16_gemm), built here against the
# device's own torch with its CUDA 13.0 toolkit (/usr/local/cuda).
# .whl-dg/ (git-ignored) holds:
#   deepgemm-54e2261-src.tgz  DeepGEMM at 54e2261 with its submodules' headers at their
#                             pins (CUTLASS include/ at f3fde58, fmt include/ at 553ec11),
#                             made with `git archive` from the three repositories;
#   setuptools-80.9.0, wheel-0.45.1 (py3-none-any): what its setup.py imports.
# Leaves /tmp/DeepGEMM importable (its _C extension linked beside the package) and writes
# the build's log to /tmp/deepgemm_build.log. DeepGEMM compiles each GEMM's kernel at its
# first call, with the CUDA toolkit of CUDA_HOME (an inherited variable), into
# $HOME/.deep_gemm, which in an audit is the worker's private directory. The check
# below compiles with nvcc, as the audits do, into /tmp/dg-cache (with NVRTC,
# DG_JIT_USE_NVRTC=1, the kernel image is refused: CUDA_ERROR_INVALID_IMAGE).
# Built with the system's g++ (/usr/bin/g++): the machine's default c++ (/opt/gcc/bin/g++,
# a wrapper of the same GCC 13.3) left an extension whose first GEMM died in the
# std::ostream code inside it; that build works with libstdc++ preloaded, and the one
# by /usr/bin/g++ works as it is (results/h200/2026-12-04-deepgemm/).
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site-build .whl-dg/*.whl
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || true
rm -rf /tmp/DeepGEMM
tar xzf .whl-dg/deepgemm-*-src.tgz -C /tmp
cd /tmp/DeepGEMM
ln -sf "$PWD/third-party/cutlass/include/cutlass" deep_gemm/include
ln -sf "$PWD/third-party/cutlass/include/cute" deep_gemm/include
PYTHONPATH=/tmp/site-build:/tmp/site CUDA_HOME=/usr/local/cuda MAX_JOBS=16 \
  CXX=/usr/bin/g++ CC=/usr/bin/gcc LDSHARED="/usr/bin/g++ -shared" python3 setup.py build > /tmp/deepgemm_build.log 2>&1
so=$(find build -name "*.so" -type f | head -1)
ln -sf "../$so" deep_gemm/
PYTHONPATH=/tmp/DeepGEMM:/tmp/site CUDA_HOME=/usr/local/cuda \
  DG_JIT_CACHE_DIR=/tmp/dg-cache python3 - <<'PY'
import torch, deep_gemm
a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
w = torch.randn(12288, 4096, dtype=torch.bfloat16, device="cuda")
d = torch.empty(4096, 12288, dtype=torch.bfloat16, device="cuda")
deep_gemm.bf16_gemm_nt(a, w, d)
err = (d.float() - a.float() @ w.float().T).abs().max().item()
print("deep_gemm", deep_gemm.__file__, "bf16_gemm_nt 4096x12288x4096 max abs err", err)
PY
