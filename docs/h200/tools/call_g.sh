#!/usr/bin/env bash
# Call G (session 3): the sweep-F winners (grouped GEMM FP8-MMA with shift decoding and 4
# warps; sparse/mixed MLA with 32 heads x 64 keys per step) and the new Triton
# neighbourhood-attention kernels:
#   1. validation-only audit of those solutions on every sample workload;
#   2. benchmark shapes of their definitions (torch baselines timed in the same call);
#   3. tile sweeps (docs/h200/tools/sweep_g.json) in the time left.
set -uo pipefail
start=$SECONDS
source docs/h200/tools/device_setup.sh
NA=neighborhood_attention_3d
DEFS=grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32
DEFS=$DEFS,sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640
DEFS=$DEFS,mixed_mla_decode_deepseek41_h64_d512_k8128_k4512,${NA}_h16_d64_kt3_ky7_kx7
DEFS=$DEFS,${NA}_h32_d64_kt3_ky7_kx7,${NA}_h4_d64_kt11_ky11_kx11,${NA}_h8_d64_kt3_ky5_kx5
SOL=triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120,triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304
SOL=$SOL,triton_split_gather_sparse_mla_h64_k128,triton_split_gather_sparse_mla_h64_k640
SOL=$SOL,triton_fused_dequant_mixed_mla_decode_h64,triton_na3d_brick_h16_d64_kt3_ky7_kx7
SOL=$SOL,triton_na3d_brick_h32_d64_kt3_ky7_kx7,triton_na3d_brick_h4_d64_kt11_ky11_kx11
SOL=$SOL,triton_na3d_brick_h8_d64_kt3_ky5_kx5
timeout 210 python3 -m hf_eval audit --device cuda --validation-only --solutions "$SOL" \
  --definitions "$DEFS" --report "$OUT/results.jsonl" > "$OUT/audit.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; tail -3 "$OUT/audit.log"
timeout 130 python3 -m hf_eval.benchmark --out "$OUT" --definitions "$DEFS" \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$? at $((SECONDS - start)) s"
left=$((560 - (SECONDS - start)))
timeout "$left" python3 docs/h200/tools/sweep.py docs/h200/tools/sweep_g.json --out "$OUT" \
  > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? at $((SECONDS - start)) s"; grep -c TIMED "$OUT/sweep.jsonl"
