#!/usr/bin/env bash
# DeepGEMM's BF16 GEMM dies in std::ostream code compiled into its extension
# (2026-12-04-deepgemm/diagnose: deep_gemm::operator<<(ostream, GemmDesc) ->
# ostream::_M_insert<long>, a fault at 0x20), as if two C++ runtimes met in one process.
# Which compiler built it, which libstdc++ the process maps, and whether the call works
# with the compiler's own libstdc++ preloaded, or with the extension rebuilt by the
# system's g++ (repository root, after deepgemm_build.sh in the same call):
#   bash results/h200/deepgemm_compilers.sh OUT_DIR
set -uo pipefail
OUT=${1:?OUT_DIR}
mkdir -p "$OUT"
export CUDA_HOME=/usr/local/cuda DG_JIT_CACHE_DIR=/tmp/dg-cache
GXX_LIB=$(/opt/gcc/bin/g++ -print-file-name=libstdc++.so.6)
{ echo "== compilers"; /opt/gcc/bin/g++ --version | head -1; ls -l /usr/bin/g++* 2>&1
  /usr/bin/g++ --version 2>&1 | head -1; echo "compiler's libstdc++: $GXX_LIB"
  for lib in "$GXX_LIB" /lib/x86_64-linux-gnu/libstdc++.so.6; do
    echo "$lib newest: $(strings "$lib" 2>/dev/null | grep -o '^GLIBCXX_3\.4\.[0-9]*' | sort -V | tail -1)"
  done
  echo "== libstdc++ mapped by import torch"
  python3 -c 'import torch; print({l.split()[-1] for l in open("/proc/self/maps") if "libstdc++" in l})'
} > "$OUT/compilers.txt" 2>&1
cat "$OUT/compilers.txt"
gemm() {  # $1: label; the rest: environment for the interpreter
  local label=$1; shift
  env "$@" timeout 300 python3 - > "$OUT/$label.txt" 2>&1 <<'PY'
import torch, deep_gemm
a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
w = torch.randn(12288, 4096, dtype=torch.bfloat16, device="cuda")
d = torch.empty(4096, 12288, dtype=torch.bfloat16, device="cuda")
deep_gemm.bf16_gemm_nt(a, w, d)
torch.cuda.synchronize()
err = (d.float() - a.float() @ w.float().T).abs().max().item()
print("bf16_gemm_nt 4096x12288x4096 max abs err", err, deep_gemm.__file__)
PY
  echo "exit $?" >> "$OUT/$label.txt"; echo "== $label"; tail -n 3 "$OUT/$label.txt"
}
gemm preload_compiler_libstdcxx PYTHONPATH=/tmp/DeepGEMM:/tmp/site LD_PRELOAD="$GXX_LIB"
if [ -x /usr/bin/g++ ]; then
  rm -rf /tmp/DeepGEMM-sys && cp -r /tmp/DeepGEMM /tmp/DeepGEMM-sys && cd /tmp/DeepGEMM-sys
  rm -rf build deep_gemm/_C*.so
  PYTHONPATH=/tmp/site-build:/tmp/site CXX=/usr/bin/g++ CC=/usr/bin/gcc LDSHARED="/usr/bin/g++ -shared" MAX_JOBS=16 \
    python3 setup.py build > "$OUT/build_system_gxx.log" 2>&1
  echo "build exit $?" >> "$OUT/build_system_gxx.log"
  so=$(find build -name "*.so" -type f | head -1); ln -sf "../$so" deep_gemm/
  cd - > /dev/null
  grep -c "/usr/bin/g++" "$OUT/build_system_gxx.log"
  gemm system_gxx PYTHONPATH=/tmp/DeepGEMM-sys:/tmp/site
fi
