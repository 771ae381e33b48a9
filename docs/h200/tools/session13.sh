#!/usr/bin/env bash
# Session 13 on the H200 (issue 12): what the coverage table of docs/h200/performance.md
# ("Coverage: what the H200 records still lack") still lists for the library solutions, each
# beside the task's preferred solution in the same step. First the validation-only sample
# audits of the preferred solutions on the samples added since their last audit (cheap); the
# library solutions with unaudited samples are audited by `bench run --samples` in the same
# workers that then time them, so each compiles (and fla autotunes, about 240 s per fresh
# worker) once. The GDN prefill step needs a call of its own: it waits for the marker
# `call2`, which the second work call creates. Files go into docs/h200/session13/, then
# `hf-eval bench report --dir docs/h200` (docs/h200/commands.txt).
#
#   bash docs/h200/tools/session13.sh stage K       # carry [".stage7/K"], K = 1..5
#   bash docs/h200/tools/session13.sh stage 6 && bash docs/h200/tools/session13.sh work 575
#                                                   # carry [".stage7/6"]
#   touch /tmp/s13/done/call2 && bash docs/h200/tools/session13.sh work 585
#   bash docs/h200/tools/session13.sh work BUDGET_S # the rest
set -uo pipefail
S=/tmp/s13
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
AUDIT="python3 -m hf_eval audit --device cuda --suite sample --validation-only --report $S/results.jsonl"
GDN_P=gdn_prefill_qk4_v8_d128_k_last
PREFIX=prefix_cached_block_causal_h32_d128
queue() {
  cat <<EOF2
preferred_samples|200|-|$AUDIT --definitions gdn_decode_qk4_v8_d128_k_last,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32,noncausal_dense_attention_h32_d128,noncausal_dense_attention_h32_d64 --solutions fla_recurrent_gdn_decode_qk4_v8_d128,triton_split_kv_sparse_gqa_decode_h24_kv2,triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120,triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304,torch_sdpa_dense_h32_d128,torch_sdpa_dense_h32_d64
gdn_prefill|585|call2|$TIMED --samples --definitions $GDN_P --solutions preferred,fla_recurrent_gdn_prefill_qk4_v8_d128,flashinfer_gdn_prefill_qk4_v8_d128 --shapes four_seqs_4096,sixteen_seqs_1024_one_empty
prefix_cached_cudnn|200|-|$TIMED --samples --definitions $PREFIX --solutions preferred,cudnn_sdpa_prefix_cached_h32_d128 --shapes nq4096_np4352,b2_nq8192_np512
dense_d64_cross|120|-|$TIMED --definitions noncausal_dense_attention_h32_d64 --solutions preferred,cudnn_sdpa_dense_h32_d64 --shapes cross_nq4096_nk16384
sparse_mla_k640_t4096|240|-|$TIMED --definitions sparse_mla_prefill_h64_d512_k640 --solutions preferred,flashinfer_mla_sparse_mla_h64_k640,triton_split_gather_sparse_mla_h64_k640 --shapes t4096_s16384
qsa_sparse_fa4_b64|120|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions preferred,sglang_fa4_sparse_gqa_decode_h24_kv2 --shapes b64_ctx32k
mla_b64_flashinfer|180|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions preferred,flashinfer_mla_dequant_mixed_mla_h64 --shapes b64
grouped_n5120_m768|150|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions preferred,baseline --shapes m768_decode128
flex_prefix0|300|-|$TIMED --samples --definitions ${PREFIX}_prefix0 --solutions preferred,flex_prefix0_h32_d128 --shapes text256_img4096_text32,text300_img4096_img4096_text50,b2_text512_img4096
EOF2
}

session_main "$@"
