#!/usr/bin/env bash
# Session 9 on the H200 (issues 11 and 12): the benchmark-shape lines session 8 did not
# reach (docs/h200/notes.md, "Coverage"), through the confined, checked path; first the
# adversarial candidates (session 8 changed the judge: undecided rows, per-trial records),
# then the router at t1024 and t8192 again, now that its undecided rows
# (hf_eval/families/moe_router.undecided_rows) are not judged, and the QSA index at b64;
# then the library solutions of issue 12 beside the preferred ones in the same call (GDN
# prefill's FlashInfer paths, NATTEN), and their sample audits on all 12 samples.
# Append its bench.jsonl to docs/h200/bench.jsonl, then `hf-eval bench report
# --dir docs/h200` (docs/h200/commands.txt).
#
#   bash docs/h200/tools/session9.sh stage 1 && NATTEN_WORKERS=8 bash docs/h200/tools/natten_build.sh
#                                                   # carry [".stage7/1", ".natten"]
#   bash docs/h200/tools/session9.sh stage K        # carry [".stage7/K"], K = 2..6
#   bash docs/h200/tools/session9.sh work BUDGET_S  # install once, then the queue's next steps
#
# Session 8 measured what a step costs: about 10 s of judging and timing per line
# (definition, shape, solution), so the heavy shapes get their own steps and limits, in the
# order of what decides a preference; what the budget does not reach is named in the
# session's README. NATTEN compiles on 8 of the 16 CPUs (nice 10) while the first steps run.
set -uo pipefail
S=/tmp/s9
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
BP="--solutions baseline,preferred"
NA=neighborhood_attention_3d
NA_DEFS=${NA}_h16_d64_kt3_ky7_kx7,${NA}_h32_d64_kt3_ky7_kx7,${NA}_h4_d64_kt11_ky11_kx11,${NA}_h8_d64_kt3_ky5_kx5
NATTEN=natten_na3d_h16_d64_kt3_ky7_kx7,natten_na3d_h32_d64_kt3_ky7_kx7,natten_na3d_h4_d64_kt11_ky11_kx11,natten_na3d_h8_d64_kt3_ky5_kx5
# Library and engine solutions audited on fewer than today's 12 samples on the H200.
LIB_DEFS=noncausal_dense_attention_h32_d128,noncausal_dense_attention_h32_d64,prefix_cached_block_causal_h32_d128,prefix_cached_block_causal_h32_d128_prefix0,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,gdn_decode_qk4_v8_d128_k_last,sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640
LIB_SOLUTIONS=fa4_dense_h32_d128,fa4_dense_h32_d64,fa4_prefix_cached_h32_d128,fa4_segments_prefix0_h32_d128,flashinfer_paged_decode_qsa_h24_kv2,sglang_fa4_sparse_gqa_decode_h24_kv2,flashinfer_gdn_decode_qk4_v8_d128,sglang_packed_decode_gdn_decode_qk4_v8_d128,flashinfer_mla_sparse_mla_h64_k128,sglang_flashmla_sparse_prefill_h64_k128,flashinfer_mla_sparse_mla_h64_k640
queue() {
  cat <<EOF2
adversarial|240|-|python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py tests/test_undecided_rows.py
router|90|-|$TIMED --definitions moe_router_gemm_topk_deepseek41_d5120_e384_topk6 --solutions baseline,preferred,sglang_moe_fused_gate_router_e384_k6 --shapes t1024,t8192
qsa_index_b64|60|-|$TIMED --definitions qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 --solutions baseline,preferred,flashinfer_topk_qsa_index_h4 --shapes b64_ctx32k
gdn_prefill_lib|200|-|$TIMED --samples --definitions gdn_prefill_qk4_v8_d128_k_last --solutions baseline,flashinfer_gdn_prefill_qk4_v8_d128,sglang_flashinfer_gdn_prefill_qk4_v8_d128
grouped_n4608|240|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32 $BP
qsa_b64|150|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions baseline,preferred,flashinfer_paged_decode_qsa_h24_kv2 --shapes b64_ctx32k
library_samples|180|-|python3 -m hf_eval audit --device cuda --suite sample --validation-only --resume --report $S/results.jsonl --definitions $LIB_DEFS --solutions $LIB_SOLUTIONS
na_t16|200|-|bash docs/h200/tools/natten_wait.sh 240; $TIMED --definitions $NA_DEFS --solutions baseline,preferred,$NATTEN --shapes t16_y64_x96
na_t12|120|-|bash docs/h200/tools/natten_wait.sh 60; $TIMED --samples --definitions ${NA}_h8_d64_kt3_ky5_kx5 --solutions preferred,natten_na3d_h8_d64_kt3_ky5_kx5,sglang_flex_na3d_h8_d64_kt3_ky5_kx5 --shapes t12_y32_x48; $TIMED --definitions ${NA}_h16_d64_kt3_ky7_kx7,${NA}_h32_d64_kt3_ky7_kx7,${NA}_h4_d64_kt11_ky11_kx11 --solutions preferred,$NATTEN --shapes t12_y32_x48
grouped_n5120|200|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 $BP --shapes m6144_t1024,m24576_t4096
dense_d128|150|-|$TIMED --definitions noncausal_dense_attention_h32_d128 $BP --shapes self_n32768,cross_nq32768_nk256
dense_d64|120|-|$TIMED --definitions noncausal_dense_attention_h32_d64 $BP --shapes self_b2_n8192,cross_nq4096_nk16384
prefix|150|-|$TIMED --definitions prefix_cached_block_causal_h32_d128 $BP --shapes nq4096_np4352,b2_nq8192_np512
prefix0|150|-|$TIMED --definitions prefix_cached_block_causal_h32_d128_prefix0 $BP --shapes text300_img4096_img4096_text50,b2_text512_img4096
mla_b64|60|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions baseline --shapes b64
gdn_prefill_fla|240|-|$TIMED --definitions gdn_prefill_qk4_v8_d128_k_last --solutions preferred
EOF2
}

session_main "$@"
