#!/usr/bin/env bash
# Session 5 on the H200 (issues 11, 12, 13): the device calls N, O, P, Q, R, S.
#
#   bash docs/h200/tools/session5.sh stage K        # calls N..Q: carry [".stage/K"] (call N
#                                                   # also [".natten"]): copy piece K of the
#                                                   # wheel tar to /tmp/stage; call N starts
#                                                   # NATTEN's detached build
#   bash docs/h200/tools/session5.sh work BUDGET_S  # calls Q..S: install once, then run the
#                                                   # next steps of the queue below until the
#                                                   # budget is spent; results accumulate in
#                                                   # /tmp/s5 and are copied to $OUT each call
#
# The wheels (docs/h200/session5-wheels.txt: names, versions, sha256) were tarred here and
# cut into four pieces, so that each call carries at most 50 MB beside the 13.5 MB tree
# (the tool's limit is 64 MiB a call); a warm machine keeps /tmp for ~30 s between calls, so
# the calls follow each other at once. Every step is bounded by `timeout`; a step cut short
# keeps what it wrote (the JSONL files are appended line by line) and is not run again.
set -uo pipefail
start=$SECONDS
S=/tmp/s5
mkdir -p "$S/done" /tmp/stage
TAR_SHA256=970a7fe633b27ea01493ccd83cd16864537dcf1ad9be832f6638ec85f95caabb

stage() {
  cp ".stage/$1/piece.$1" /tmp/stage/
  ls -la /tmp/stage
  if [ "$1" = 1 ]; then  # NATTEN compiles on the CPUs while the GPU work runs
    NATTEN_WORKERS=12 bash docs/h200/tools/natten_build.sh 2>&1 | tail -5
  fi
}

install() {
  [ -f "$S/installed" ] && return 0
  cat /tmp/stage/piece.1 /tmp/stage/piece.2 /tmp/stage/piece.3 /tmp/stage/piece.4 \
    > /tmp/stage/wheels.tar || return 1
  echo "$TAR_SHA256  /tmp/stage/wheels.tar" | sha256sum -c - || return 1
  mkdir -p /tmp/stage/w && tar xf /tmp/stage/wheels.tar -C /tmp/stage/w || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site /tmp/stage/w/*.whl || return 1
  touch "$S/installed"
}

environment() {
  export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD
  export PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
  [ -f "$S/env.txt" ] && return 0
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
      --format=csv
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

# name | seconds | command (run from the repository root; $S is /tmp/s5)
BENCH="python3 -m hf_eval bench run --out $S --samples"
queue() {
  cat <<EOF
adversarial|200|python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py -k cuda
natten|30|bash docs/h200/tools/natten_status.sh
na_h8|120|$BENCH --definitions neighborhood_attention_3d_h8_d64_kt3_ky5_kx5 --solutions baseline,preferred,natten_na3d_h8_d64_kt3_ky5_kx5,sglang_flex_na3d_h8_d64_kt3_ky5_kx5
gdn_prefill|150|$BENCH --definitions gdn_prefill_qk4_v8_d128_k_last --solutions baseline,preferred,flashinfer_gdn_prefill_qk4_v8_d128,sglang_flashinfer_gdn_prefill_qk4_v8_d128
prefix0|110|$BENCH --definitions prefix_cached_block_causal_h32_d128_prefix0 --solutions baseline,preferred,fa4_segments_prefix0_h32_d128
sparse_mla_k128|110|$BENCH --definitions sparse_mla_prefill_h64_d512_k128 --solutions baseline,preferred,flashinfer_mla_sparse_mla_h64_k128,sglang_flashmla_sparse_prefill_h64_k128
gdn_decode|170|$BENCH --definitions gdn_decode_qk4_v8_d128_k_last --solutions baseline,preferred,flashinfer_gdn_decode_qk4_v8_d128,sglang_packed_decode_gdn_decode_qk4_v8_d128
qsa_index|150|$BENCH --definitions qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 --solutions baseline,preferred,flashinfer_topk_qsa_index_h4
qsa_attention|170|$BENCH --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions baseline,preferred,flashinfer_paged_decode_qsa_h24_kv2,sglang_fa4_sparse_gqa_decode_h24_kv2
router|150|$BENCH --definitions moe_router_gemm_topk_deepseek41_d5120_e384_topk6 --solutions baseline,preferred,flashinfer_topk_moe_router_e384_k6,sglang_moe_fused_gate_router_e384_k6
dense_d128|150|$BENCH --definitions noncausal_dense_attention_h32_d128 --solutions baseline,preferred,fa4_dense_h32_d128
dense_d64|120|$BENCH --definitions noncausal_dense_attention_h32_d64 --solutions baseline,preferred,fa4_dense_h32_d64
prefix|150|$BENCH --definitions prefix_cached_block_causal_h32_d128 --solutions baseline,preferred,fa4_prefix_cached_h32_d128
sparse_mla_k640|150|$BENCH --definitions sparse_mla_prefill_h64_d512_k640 --solutions baseline,preferred,flashinfer_mla_sparse_mla_h64_k640,sglang_flashmla_sparse_prefill_h64_k640
mixed_mla|150|$BENCH --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions baseline,preferred,flashinfer_mla_dequant_mixed_mla_h64
gemm|200|$BENCH --definitions dense_gemm_bf16_nt_n4096_k4096,dense_gemm_bf16_nt_n12288_k4096,dense_gemm_bf16_nt_n4096_k12288 --solutions baseline,preferred
grouped_gemm|200|$BENCH --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions baseline,preferred
na_h16|120|$BENCH --definitions neighborhood_attention_3d_h16_d64_kt3_ky7_kx7 --solutions baseline,preferred,natten_na3d_h16_d64_kt3_ky7_kx7,sglang_flex_na3d_h16_d64_kt3_ky7_kx7
na_h32|120|$BENCH --definitions neighborhood_attention_3d_h32_d64_kt3_ky7_kx7 --solutions baseline,preferred,natten_na3d_h32_d64_kt3_ky7_kx7,sglang_flex_na3d_h32_d64_kt3_ky7_kx7
na_h4|120|$BENCH --definitions neighborhood_attention_3d_h4_d64_kt11_ky11_kx11 --solutions baseline,preferred,natten_na3d_h4_d64_kt11_ky11_kx11,sglang_flex_na3d_h4_d64_kt11_ky11_kx11
ray|200|mkdir -p $S/ray && OUT=$S/ray bash docs/h200/tools/ray_vs_local.sh; tar cf $S/ray.tar -C $S ray
EOF
}

work() {
  local budget=$1
  install || { echo "install failed"; return 1; }
  environment
  while IFS='|' read -r name seconds command; do
    [ -f "$S/done/$name" ] && continue
    [ "$name" = ray ] && [ ! -d .whl-ray ] && continue  # carried by the last call only
    left=$((budget - (SECONDS - start) - 15))
    if [ "$left" -lt 45 ]; then echo "# budget spent: stopping before $name"; break; fi
    [ "$seconds" -gt "$left" ] && seconds=$left
    # The benchmark measures the ceilings once; later steps reuse them.
    if [[ $command == *"hf_eval bench run"* ]] && [ -f "$S/ceilings.json" ]; then
      command="$command --ceilings $S/ceilings.json"
    fi
    echo "# $name (limit ${seconds} s) at $((SECONDS - start)) s: $command" | tee -a "$S/log.txt"
    t0=$SECONDS
    timeout "$seconds" bash -c "$command" < /dev/null >> "$S/log.txt" 2>&1
    rc=$?
    # NATTEN still compiling (natten_status.sh exits 3): ask again in the next call.
    [ "$name" = natten ] && [ "$rc" = 3 ] && continue
    touch "$S/done/$name"
    echo "# $name rc=$rc in $((SECONDS - t0)) s" | tee -a "$S/log.txt"
  done < <(queue)
}

case "${1:-}" in
  stage) stage "$2" ;;
  work) work "$2" ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
esac
for f in results.jsonl bench.jsonl log.txt env.txt ceilings.json ray.tar; do
  [ -f "$S/$f" ] && cp "$S/$f" "$OUT/"
done
[ -f /tmp/natten-build.log ] && tail -c 200000 /tmp/natten-build.log > "$OUT/natten-build.log"
echo "session5 $1 done at $((SECONDS - start)) s"
tail -25 "$S/log.txt" 2>/dev/null
