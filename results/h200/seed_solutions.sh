#!/usr/bin/env bash
# The published dataset's sm_90-capable solutions, audited on every sample workload of
# their definitions on the device machine (repository root):
#   [ONLY=REGEX] bash results/h200/seed_solutions.sh OUT_DIR [extra audit options, e.g.
#                                                             --validation-only]
# One device call lasts at most 10 minutes: split the list across calls with ONLY (an
# extended regular expression on the solution names, e.g. ONLY='^fa4_|^flashinfer_'); a
# solution whose report OUT_DIR/<name>.jsonl already holds records is not audited again.
# Wheels (no network there), cp312 manylinux x86_64:
#   .whl/       the harness's own dependencies (as for adversarial.sh and timing.sh);
#   .whl-seed/  the libraries (docs/seed-solutions.md lists them with their sizes),
#               265 MiB: over one call's 64 MiB carry, so they are staged with
#               `../shared/device/stage plan .whl-seed` and its calls' `put` steps only
#               (not its `install`, which would put both apache-tvm-ffi versions into one
#               site): this script reassembles the parts left in /tmp/stage itself and
#               installs every wheel it finds there or in a carried .whl-seed/.
#               A distribution already installed in its site is not installed again.
# tilelang 0.1.12 pins apache-tvm-ffi 0.1.11 while the FA4/FlashInfer stack pins
# 0.1.15.post2, so tilelang and its own dependencies go to /tmp/site-tilelang, used only
# for the QSA index solutions. NATTEN has no wheel: its solution runs only where libnatten was built
# (docs/h200/natten.md); otherwise OUT_DIR/not_run.txt says so. DeepGEMM has no wheel for
# the device's torch: the deepgemm_bf16_* and hybrid_bf16_* solutions import the build
# that results/h200/deepgemm_build.sh leaves in /tmp/DeepGEMM (it JIT-compiles its
# kernels with the CUDA toolkit of CUDA_HOME, /usr/local/cuda by default).
# Writes OUT_DIR/env.txt, OUT_DIR/<solution>.jsonl (one audit report each, with its
# .skipped.jsonl when the audit skipped it), OUT_DIR/<solution>.txt (the audit's output),
# OUT_DIR/seed_solutions.jsonl (every record) and OUT_DIR/not_run.txt.
set -uo pipefail
OUT=${1:?OUT_DIR}; shift
mkdir -p "$OUT"
SITE=/tmp/site TL_SITE=/tmp/site-tilelang
install_wheels() {  # into a target, in one pip call, those whose distribution is not there
  # One call: wheels that share a top-level folder (nvidia_cutlass_dsl/ of the three
  # CUTLASS DSL wheels) are merged; installed one by one, pip --target keeps the first
  # wheel's folder and skips the others' (the cause of "No module named 'cutlass.cute'").
  local target=$1 dist whl; shift
  local todo=()
  for whl in "$@"; do
    [ -f "$whl" ] || continue
    dist=$(basename "$whl" | cut -d- -f1)
    ls -d "$target/${dist}"-*.dist-info >/dev/null 2>&1 && continue
    todo+=("$whl")
  done
  [ ${#todo[@]} -gt 0 ] || return 0
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$target" \
    "${todo[@]}" >/dev/null 2>&1 || echo "install failed: ${todo[*]}" >> "$OUT/not_run.txt"
}
echo "# $(date -u)" >> "$OUT/not_run.txt"
STAGE=/tmp/stage  # parts left by ../shared/device/stage put, reassembled as its install does
for first in "$STAGE"/*.part.000; do
  [ -e "$first" ] || continue
  base=${first%.part.000}; cat "$base".part.* > "$base" && rm -f "$base".part.*
done
install_wheels "$SITE" .whl/*.whl
site_wheels=() tl_wheels=()
for whl in .whl-seed/*.whl "$STAGE"/*.whl; do
  case $(basename "$whl") in
    tilelang-*|apache_tvm_ffi-0.1.11-*|z3_solver-*|ml_dtypes-*|psutil-*|cloudpickle-*)
      tl_wheels+=("$whl") ;;
    *) site_wheels+=("$whl") ;;
  esac
done
install_wheels "$SITE" "${site_wheels[@]}"
install_wheels "$TL_SITE" "${tl_wheels[@]}"
DSL=$SITE/nvidia_cutlass_dsl/dsl_packages  # its .pth file is not read under --target
export HF_EVAL_CACHE=/tmp/hfc PYTHONUNBUFFERED=1
BASE=$SITE:$DSL:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  PYTHONPATH=$BASE python3 -c 'import sys, torch; print("python", sys.version.split()[0],
"torch", torch.__version__, "cuda", torch.version.cuda)'
  git log -1 --format='commit %H'; ls "$SITE" "$TL_SITE" 2>/dev/null | grep dist-info
} > "$OUT/env.txt" 2>&1

# name definition (every seed solution whose library runs on sm_90)
SOLUTIONS="
fa4_prefix_h32_d128 prefix_cached_block_causal_h32_d128
fa4_prefix0_h32_d128 prefix_cached_block_causal_h32_d128_prefix0
fa4_noncausal_h32_d128 noncausal_dense_attention_h32_d128
fa4_noncausal_h32_d64 noncausal_dense_attention_h32_d64
flashinfer_gdn_decode gdn_decode_qk4_v8_d128_k_last
flashinfer_gdn_prefill gdn_prefill_qk4_v8_d128_k_last
deepgemm_bf16_n12288_k4096 dense_gemm_bf16_nt_n12288_k4096
deepgemm_bf16_n4096_k12288 dense_gemm_bf16_nt_n4096_k12288
hybrid_bf16_n4096_k4096 dense_gemm_bf16_nt_n4096_k4096
fused_router moe_router_gemm_topk_deepseek41_d5120_e384_topk6
sglang_tilelang_index qsa_index_topk_decode_qwen38_h4_d128_topk512_c4
fa4_sparse_gqa qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4
flashmla_prefill_k128 sparse_mla_prefill_h64_d512_k128
flashmla_prefill_k640 sparse_mla_prefill_h64_d512_k640
sglang_prefix_cached_block_causal_h32_d128 prefix_cached_block_causal_h32_d128
sglang_prefix_cached_block_causal_h32_d128_prefix0 prefix_cached_block_causal_h32_d128_prefix0
sglang_noncausal_dense_attention_h32_d128 noncausal_dense_attention_h32_d128
sglang_noncausal_dense_attention_h32_d64 noncausal_dense_attention_h32_d64
sglang_dense_gemm_bf16_nt_n12288_k4096 dense_gemm_bf16_nt_n12288_k4096
sglang_dense_gemm_bf16_nt_n4096_k12288 dense_gemm_bf16_nt_n4096_k12288
sglang_dense_gemm_bf16_nt_n4096_k4096 dense_gemm_bf16_nt_n4096_k4096
sglang_moe_router_gemm_topk_deepseek41_d5120_e384_topk6 moe_router_gemm_topk_deepseek41_d5120_e384_topk6
sglang_neighborhood_attention_3d_h16_d64_kt3_ky7_kx7 neighborhood_attention_3d_h16_d64_kt3_ky7_kx7
sglang_neighborhood_attention_3d_h32_d64_kt3_ky7_kx7 neighborhood_attention_3d_h32_d64_kt3_ky7_kx7
sglang_neighborhood_attention_3d_h4_d64_kt11_ky11_kx11 neighborhood_attention_3d_h4_d64_kt11_ky11_kx11
sglang_neighborhood_attention_3d_h8_d64_kt3_ky5_kx5 neighborhood_attention_3d_h8_d64_kt3_ky5_kx5
sglang_qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 qsa_index_topk_decode_qwen38_h4_d128_topk512_c4
sglang_qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4
sglang_sparse_mla_prefill_h64_d512_k128 sparse_mla_prefill_h64_d512_k128
sglang_sparse_mla_prefill_h64_d512_k640 sparse_mla_prefill_h64_d512_k640
"
echo "$SOLUTIONS" | while read -r name definition; do
  [ -n "$name" ] || continue
  [ -z "${ONLY:-}" ] || echo "$name" | grep -Eq "$ONLY" || continue
  [ -s "$OUT/$name.jsonl" ] && { echo "$name: report already there"; continue; }
  path=$BASE
  case $name in *qsa_index*|sglang_tilelang_index) path=$TL_SITE:$BASE ;; esac
  case $name in deepgemm_bf16_*|hybrid_bf16_*)  # built by results/h200/deepgemm_build.sh
    path=/tmp/DeepGEMM:$BASE; export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} ;; esac
  case $definition in neighborhood_attention_*)
    if ! PYTHONPATH=$path python3 -c 'from natten._libnatten import HAS_LIBNATTEN; assert HAS_LIBNATTEN' 2>/dev/null; then
      echo "$name: not run: natten with libnatten is not installed (no wheel; source build)" >> "$OUT/not_run.txt"
      continue
    fi ;;
  esac
  rm -f "$OUT/$name.jsonl" "$OUT/$name.skipped.jsonl"
  PYTHONPATH=$path timeout 900 python3 -m hf_eval audit --device cuda \
    --definitions "$definition" --solutions "$name" --suite sample \
    --report "$OUT/$name.jsonl" "$@" > "$OUT/$name.txt" 2>&1
  echo "exit $?" >> "$OUT/$name.txt"
  [ -s "$OUT/$name.jsonl" ] || echo "$name: no record (see $name.txt)" >> "$OUT/not_run.txt"
  echo "$name: $(tail -1 "$OUT/$name.txt")"
done
for f in "$OUT"/*.jsonl; do
  case $f in *.skipped.jsonl|*/seed_solutions.jsonl) ;; *) cat "$f" ;; esac
done > "$OUT/seed_solutions.tmp" && mv "$OUT/seed_solutions.tmp" "$OUT/seed_solutions.jsonl"
cat "$OUT/not_run.txt"
