#!/usr/bin/env bash
# Where DeepGEMM's BF16 GEMM dies on the H200 (repository root, after deepgemm_build.sh
# in the same call):  bash results/h200/deepgemm_diagnose.sh OUT_DIR
# 1. which CUDA runtime each library in the process maps (torch's bundled one, the
#    toolkit's, or both);
# 2. the cuBLASLt GEMM of the same extension (no JIT kernel), then bf16_gemm_nt, each in
#    its own interpreter, with DeepGEMM's JIT debug output and a native stack printed at
#    the fault (tools/segv_backtrace.c, preloaded).
set -uo pipefail
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
cc -shared -fPIC -O0 -o /tmp/segv.so results/h200/tools/segv_backtrace.c
export PYTHONPATH=/tmp/DeepGEMM:/tmp/site CUDA_HOME=/usr/local/cuda DG_JIT_DEBUG=1 \
  DG_JIT_CACHE_DIR=/tmp/dg-cache
so=$(ls /tmp/DeepGEMM/deep_gemm/_C*.so)
{ echo "== ldd $so"; ldd "$so" | grep -E "cudart|nvrtc|torch|c10|cuda"
  echo "== CUDA runtimes mapped after import torch, deep_gemm and one CUDA tensor"
  python3 - <<'PY'
import torch, deep_gemm
torch.zeros(1, device="cuda")
seen = sorted({line.split()[-1] for line in open("/proc/self/maps")
               if "cudart" in line or "nvrtc" in line or "libcuda." in line})
print("\n".join(seen))
PY
} > "$OUT/runtimes.txt" 2>&1
for call in cublaslt_gemm_nt bf16_gemm_nt; do
  LD_PRELOAD=/tmp/segv.so timeout 300 python3 - "$call" > "$OUT/$call.txt" 2>&1 <<'PY'
import sys, torch, deep_gemm
call = getattr(deep_gemm, sys.argv[1])
a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
w = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
d = torch.empty(4096, 4096, dtype=torch.bfloat16, device="cuda")
print("calling", sys.argv[1], flush=True)
call(a, w, d)
torch.cuda.synchronize()
err = (d.float() - a.float() @ w.float().T).abs().max().item()
print(sys.argv[1], "max abs err", err)
PY
  echo "exit $?" >> "$OUT/$call.txt"
  tail -n 40 "$OUT/$call.txt"
done
