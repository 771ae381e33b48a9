#!/usr/bin/env bash
# Session 9 on the H200 (issues 11 and 12), prepared in session 8 and not yet run: the
# benchmark-shape lines session 8 did not reach (docs/h200/notes.md, "Coverage"), through
# the confined, checked path, so that docs/h200/bench.jsonl and performance.md cover every
# definition; first the CUDA adversarial tests (session 8 changed the judge: undecided rows,
# per-trial records), then the router at t1024 and t8192 again, now that its undecided rows
# (hf_eval/families/moe_router.undecided_rows) are not judged, and the QSA index at b64.
# Append its bench.jsonl to docs/h200/bench.jsonl, then `hf-eval bench report
# --dir docs/h200` (docs/h200/commands.txt).
#
#   bash docs/h200/tools/session9.sh stage K        # carry [".stage7/K"], K = 1..6
#   bash docs/h200/tools/session9.sh work BUDGET_S  # install once, then the queue's next steps
#
# Session 8 measured what a step costs: about 10 s of judging and timing per line
# (definition, shape, solution), so the heavy shapes get their own steps and limits. Lines
# now carry wall_s and each trial's counted and event times, which show where the time and
# the counted time's noise go.
set -uo pipefail
S=/tmp/s9
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
BP="--solutions baseline,preferred"
NA=neighborhood_attention_3d
queue() {
  cat <<EOF2
adversarial|150|-|python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py tests/test_undecided_rows.py -k "cuda or undecided or open or sample"
router|90|-|$TIMED --definitions moe_router_gemm_topk_deepseek41_d5120_e384_topk6 --solutions baseline,preferred,sglang_moe_fused_gate_router_e384_k6 --shapes t1024,t8192
qsa_index_b64|60|-|$TIMED --definitions qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 --solutions baseline,preferred,flashinfer_topk_qsa_index_h4 --shapes b64_ctx32k
grouped_n4608|240|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32 $BP
grouped_n5120|200|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 $BP --shapes m6144_t1024,m24576_t4096
qsa_b64|150|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions baseline,preferred,flashinfer_paged_decode_qsa_h24_kv2 --shapes b64_ctx32k
dense_d128|150|-|$TIMED --definitions noncausal_dense_attention_h32_d128 $BP --shapes self_n32768,cross_nq32768_nk256
dense_d64|120|-|$TIMED --definitions noncausal_dense_attention_h32_d64 $BP --shapes self_b2_n8192,cross_nq4096_nk16384
prefix|150|-|$TIMED --definitions prefix_cached_block_causal_h32_d128 $BP --shapes nq4096_np4352,b2_nq8192_np512
prefix0|150|-|$TIMED --definitions prefix_cached_block_causal_h32_d128_prefix0 $BP --shapes text300_img4096_img4096_text50,b2_text512_img4096
mla_b64|60|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions baseline --shapes b64
na_h16|120|-|$TIMED --definitions ${NA}_h16_d64_kt3_ky7_kx7 --solutions baseline --shapes t16_y64_x96
na_h32|120|-|$TIMED --definitions ${NA}_h32_d64_kt3_ky7_kx7 --solutions baseline --shapes t16_y64_x96
na_h4|120|-|$TIMED --definitions ${NA}_h4_d64_kt11_ky11_kx11 --solutions baseline --shapes t16_y64_x96
gdn_prefill|400|-|$TIMED --definitions gdn_prefill_qk4_v8_d128_k_last $BP
EOF2
}

session_main "$@"
