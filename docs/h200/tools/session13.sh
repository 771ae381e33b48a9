#!/usr/bin/env bash
# Session 13 on the H200 (issue 12), prepared in session 12 and not yet run. First the
# preferred solutions whose sample audits on the H200 predate the samples added since
# (validation only, cheap), then what session 12's steps ran out of time for (its README:
# "What did not run"), each beside the task's preferred solution in the same step, from the
# generated table "Coverage: what the H200 records still lack" of docs/h200/performance.md.
# No FlashInfer top-k build this time (its pair is in session 12), so the steps have the
# machine's 16 CPUs to themselves. GDN prefill's fla solution autotunes for about 240 s in
# each fresh worker, so its steps come last with the longest limits. Its files go into
# docs/h200/session13/, then `hf-eval bench report --dir docs/h200` (docs/h200/commands.txt).
#
#   bash docs/h200/tools/session13.sh stage K       # carry [".stage7/K"], K = 1..5
#   bash docs/h200/tools/session13.sh stage 6 && bash docs/h200/tools/session13.sh work BUDGET_S
#                                                   # carry [".stage7/6"]; later calls: work only
set -uo pipefail
S=/tmp/s13
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
AUDIT="python3 -m hf_eval audit --device cuda --suite sample --validation-only --report $S/results.jsonl"
GDN_P=gdn_prefill_qk4_v8_d128_k_last
queue() {
  cat <<EOF2
preferred_samples|240|-|$AUDIT --definitions gdn_decode_qk4_v8_d128_k_last,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32,noncausal_dense_attention_h32_d128,noncausal_dense_attention_h32_d64 --solutions fla_recurrent_gdn_decode_qk4_v8_d128,triton_split_kv_sparse_gqa_decode_h24_kv2,triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120,triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304,torch_sdpa_dense_h32_d128,torch_sdpa_dense_h32_d64
mla_b64_flashinfer|180|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions preferred,flashinfer_mla_dequant_mixed_mla_h64 --shapes b64
sparse_mla_k640_t4096|240|-|$TIMED --definitions sparse_mla_prefill_h64_d512_k640 --solutions preferred,flashinfer_mla_sparse_mla_h64_k640,triton_split_gather_sparse_mla_h64_k640 --shapes t4096_s16384
dense_d64_cross|120|-|$TIMED --definitions noncausal_dense_attention_h32_d64 --solutions preferred,cudnn_sdpa_dense_h32_d64 --shapes cross_nq4096_nk16384
grouped_n5120_m768|180|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions preferred,baseline --shapes m768_decode128
gdn_prefill_fla_samples|420|-|$AUDIT --definitions $GDN_P --solutions fla_chunk_fp32_ieee_gdn_prefill_qk4_v8_d128
gdn_prefill_pairs|560|-|$TIMED --definitions $GDN_P --solutions preferred,flashinfer_gdn_prefill_qk4_v8_d128 --shapes four_seqs_4096,sixteen_seqs_1024_one_empty
EOF2
}

session_main "$@"
