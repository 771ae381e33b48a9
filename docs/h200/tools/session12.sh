#!/usr/bin/env bash
# Session 12 on the H200 (issues 12 and 13), prepared in session 11 and run on 2026-12-02
# (records and the two runs outside this queue: docs/h200/session12/README.md): first
# the adversarial suite (as session 10's step; the workers' relative-PYTHONPATH refusal of
# commit 00b4b93 has not met it on the device), then the five engine baselines not yet
# audited on all 12 samples (issue 13: the dense GEMMs' F.linear, the prefix-cached
# definitions' SDPA paths), then the library solutions' benchmark shapes that the records
# still lack, each beside the task's preferred
# solution in the same step, from the generated table "Coverage: what the H200 records still
# lack" of docs/h200/performance.md. FlashInfer's top-k module is built ahead of time first
# (tools/flashinfer_topk_build.sh, detached); its step waits for it. GDN prefill's fla
# solution comes last with the longest limit: its autotuning has never finished in a fresh
# worker (240 s, 134 s). Its files go into docs/h200/session12/, then
# `hf-eval bench report --dir docs/h200` (docs/h200/commands.txt). No NATTEN and no TileLang
# this time: six staging calls.
#
#   bash docs/h200/tools/session12.sh stage K       # carry [".stage7/K"], K = 1..5
#   bash docs/h200/tools/session12.sh stage 6 && bash docs/h200/tools/session12.sh work BUDGET_S
#                                                   # carry [".stage7/6"]; later calls: work only
set -uo pipefail
S=/tmp/s12
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh
SESSION_FILES+=(prebuild.topk)

TIMED="python3 -m hf_eval bench run --out $S"
GDN_P=gdn_prefill_qk4_v8_d128_k_last
GDN_D=gdn_decode_qk4_v8_d128_k_last
QSAI=qsa_index_topk_decode_qwen38_h4_d128_topk512_c4
queue() {
  cat <<EOF2
adversarial|240|-|python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py tests/test_undecided_rows.py "tests/test_families.py::test_large_fp8_inputs_get_fresh_content_on_cuda"
topk_start|20|-|bash docs/h200/tools/flashinfer_topk_build.sh $S
engine_samples|180|-|python3 -m hf_eval audit --device cuda --suite sample --validation-only --report $S/results.jsonl --definitions dense_gemm_bf16_nt_n12288_k4096,dense_gemm_bf16_nt_n4096_k12288,dense_gemm_bf16_nt_n4096_k4096,prefix_cached_block_causal_h32_d128,prefix_cached_block_causal_h32_d128_prefix0 --solutions torch_linear_bf16_n12288_k4096,torch_linear_bf16_n4096_k12288,torch_linear_bf16_n4096_k4096,torch_sdpa_prefix_cached_h32_d128,torch_sdpa_segments_prefix0_h32_d128
gdn_prefill_flashinfer|240|-|$TIMED --definitions $GDN_P --solutions preferred,flashinfer_gdn_prefill_qk4_v8_d128,sglang_flashinfer_gdn_prefill_qk4_v8_d128 --shapes four_seqs_4096,sixteen_seqs_1024_one_empty
gdn_decode_flashinfer|150|-|$TIMED --definitions $GDN_D --solutions preferred,flashinfer_gdn_decode_qk4_v8_d128,sglang_packed_decode_gdn_decode_qk4_v8_d128 --shapes b64,b256
mla_b64_flashinfer|90|-|$TIMED --definitions mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 --solutions preferred,flashinfer_mla_dequant_mixed_mla_h64 --shapes b64
sparse_mla_t4096|180|-|$TIMED --definitions sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640 --solutions preferred,flashinfer_mla_sparse_mla_h64_k128,flashinfer_mla_sparse_mla_h64_k640,triton_split_gather_sparse_mla_h64_k640 --shapes t4096_s16384
qsa_index_b64_flashinfer|200|topk_built|$TIMED --definitions $QSAI --solutions preferred,flashinfer_topk_qsa_index_h4 --shapes b64_ctx32k
dense_cudnn|150|-|$TIMED --definitions noncausal_dense_attention_h32_d128,noncausal_dense_attention_h32_d64 --solutions cudnn_sdpa_dense_h32_d128,cudnn_sdpa_dense_h32_d64 --shapes self_n32768,cross_nq32768_nk256,self_n4096,self_b2_n8192,cross_nq4096_nk16384
na_h4_torch|90|-|$TIMED --definitions neighborhood_attention_3d_h4_d64_kt11_ky11_kx11 --solutions baseline --shapes t16_y64_x96
grouped_n5120_m768|120|-|$TIMED --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions baseline --shapes m768_decode128
gdn_prefill_fla|560|-|$TIMED --definitions $GDN_P --solutions fla_chunk_fp32_ieee_gdn_prefill_qk4_v8_d128 --shapes one_seq_8192
EOF2
}

session_main "$@"
