#!/usr/bin/env bash
# Call F (session 3): new solutions checked, then tile sweeps.
#   1. validation-only audit of the new solutions (dequantise + torch._grouped_mm, Triton
#      dense GEMM) and, again for its JSONL, of QSA attention and sparse MLA k128;
#   2. benchmark shapes of the GEMM and grouped-GEMM definitions (new solutions timed next
#      to cuBLAS / the torch baseline in the same call);
#   3. tile sweeps (docs/h200/tools/sweep.py, docs/h200/tools/sweep_f.json) in the time left.
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
GG=grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32
GEMM=dense_gemm_bf16_nt_n12288_k4096,dense_gemm_bf16_nt_n4096_k12288,dense_gemm_bf16_nt_n4096_k4096
NEW=dequant_bf16_torch_grouped_mm_n4608_k5120,dequant_bf16_torch_grouped_mm_n5120_k2304
NEW=$NEW,triton_tiled_gemm_bf16_n12288_k4096,triton_tiled_gemm_bf16_n4096_k12288
NEW=$NEW,triton_tiled_gemm_bf16_n4096_k4096,triton_split_kv_sparse_gqa_decode_h24_kv2
NEW=$NEW,torch_gather_sdpa_qsa_decode_h24_kv2,triton_split_gather_sparse_mla_h64_k128
NEW=$NEW,torch_gather_sparse_mla_h64_k128
timeout 170 python3 -m hf_eval audit --device cuda --validation-only --solutions "$NEW" \
  --definitions "$GG,$GEMM,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,sparse_mla_prefill_h64_d512_k128" \
  --report "$OUT/results.jsonl" > "$OUT/audit.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; tail -3 "$OUT/audit.log"
timeout 100 python3 -m hf_eval.benchmark --out "$OUT" --definitions "$GG,$GEMM" \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $((SECONDS - start)) s"
left=$((565 - (SECONDS - start)))
timeout "$left" python3 docs/h200/tools/sweep.py docs/h200/tools/sweep_f.json --out "$OUT" \
  > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? at $((SECONDS - start)) s"; grep -c TIMED "$OUT/sweep.jsonl"
