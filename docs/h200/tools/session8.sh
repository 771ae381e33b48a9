#!/usr/bin/env bash
# Session 8 on the H200 (issues 11 and 12), prepared in session 7 and not yet run: the
# benchmark of every definition's baseline and preferred solution through the confined,
# checked path (docs/h200/bench.jsonl and performance.md are to be regenerated from it:
# `hf-eval bench report --dir <this session's folder>`), then the same-call comparisons
# session 7 did not reach: QSA sparse GQA at b64 with FlashInfer's paged decode beside the
# preferred kernel. (NATTEN beside the preferred neighbourhood solutions needs its build
# first, with nothing timed beside it: session 7's recipe, in a session of its own.)
#
#   bash docs/h200/tools/session8.sh stage K        # carry [".stage7/K"]: piece K of the
#                                                   # wheel tar to /tmp/stage
#   bash docs/h200/tools/session8.sh work BUDGET_S  # install once, then run the next steps
#                                                   # of the queue until the budget is spent
#
# Same wheels and pieces as session 7 (docs/h200/session7/README.md). Lessons kept from
# session 7: nothing compiles beside a timed step (FlashInfer's top-k build there put
# 60-280 ms of host noise into every request); each definition is its own step, so one
# slow definition cannot starve the rest; the sample audits of sessions 5-7 are not
# repeated. The queue is longer than one session's device time: a later session continues
# it (steps done are skipped while the machine stays warm; a fresh machine starts over).
set -uo pipefail
S=/tmp/s8
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

# name | seconds | needs | command (from the repository root; $S is /tmp/s8). GDN prefill
# comes last with 400 s: its preferred fla solution produced no record in 120 s (session 6)
# nor in 240 s (session 7), compiling and autotuning its Triton kernels in a fresh worker.
TIMED="python3 -m hf_eval bench run --out $S"
NA=neighborhood_attention_3d
queue() {
  cat <<EOF
dense_gemm_bf16_nt_n12288_k4096|90|-|$TIMED --definitions dense_gemm_bf16_nt_n12288_k4096 --solutions baseline,preferred
dense_gemm_bf16_nt_n4096_k12288|90|-|$TIMED --definitions dense_gemm_bf16_nt_n4096_k12288 --solutions baseline,preferred
dense_gemm_bf16_nt_n4096_k4096|90|-|$TIMED --definitions dense_gemm_bf16_nt_n4096_k4096 --solutions baseline,preferred
gdn_decode_qk4_v8_d128_k_last|90|-|$TIMED --definitions gdn_decode_qk4_v8_d128_k_last --solutions baseline,preferred
grouped_gemm_fp8_fp4_e384_n4608_k5120_g32|90|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32 --solutions baseline,preferred
grouped_gemm_fp8_fp4_e384_n5120_k2304_g32|90|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions baseline,preferred
mixed_mla_decode_deepseek41_h64_d512_k8128_k4512|90|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions baseline,preferred
moe_router_gemm_topk_deepseek41_d5120_e384_topk6|90|-|$TIMED --definitions moe_router_gemm_topk_deepseek41_d5120_e384_topk6 --solutions baseline,preferred
noncausal_dense_attention_h32_d128|90|-|$TIMED --definitions noncausal_dense_attention_h32_d128 --solutions baseline,preferred
noncausal_dense_attention_h32_d64|90|-|$TIMED --definitions noncausal_dense_attention_h32_d64 --solutions baseline,preferred
prefix_cached_block_causal_h32_d128|90|-|$TIMED --definitions prefix_cached_block_causal_h32_d128 --solutions baseline,preferred
prefix_cached_block_causal_h32_d128_prefix0|90|-|$TIMED --definitions prefix_cached_block_causal_h32_d128_prefix0 --solutions baseline,preferred
qsa_index_topk_decode_qwen38_h4_d128_topk512_c4|90|-|$TIMED --definitions qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 --solutions baseline,preferred
qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4|90|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions baseline,preferred
sparse_mla_prefill_h64_d512_k128|90|-|$TIMED --definitions sparse_mla_prefill_h64_d512_k128 --solutions baseline,preferred
sparse_mla_prefill_h64_d512_k640|90|-|$TIMED --definitions sparse_mla_prefill_h64_d512_k640 --solutions baseline,preferred
na_h8|120|-|$TIMED --definitions ${NA}_h8_d64_kt3_ky5_kx5 --solutions baseline,preferred
na_h16|120|-|$TIMED --definitions ${NA}_h16_d64_kt3_ky7_kx7 --solutions baseline,preferred
na_h32|120|-|$TIMED --definitions ${NA}_h32_d64_kt3_ky7_kx7 --solutions baseline,preferred
na_h4|120|-|$TIMED --definitions ${NA}_h4_d64_kt11_ky11_kx11 --solutions baseline,preferred
qsa_b64|150|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions preferred,flashinfer_paged_decode_qsa_h24_kv2 --shapes b64_ctx32k
gdn_prefill_qk4_v8_d128_k_last|400|-|$TIMED --definitions gdn_prefill_qk4_v8_d128_k_last --solutions baseline,preferred
EOF
}

session_main "$@"
