#!/usr/bin/env bash
# Session 14 on the H200 (issue 12), prepared in session 13; what ran, on which card, is in
# docs/h200/session14/README.md (the audit steps got --resume after an H100 call, where the
# second step's report overwrote the first's). What session 13 did not reach
# (docs/h200/session13/README.md, "What did not run"): first the engine's FA4 QSA sparse path
# at b64_ctx32k beside the task's preferred solution (session 13's 120 s limit ran out before
# its line), then Nsight Compute on the kernels behind the goals still missed
# (tools/ncu_profile.sh: NA h16, QSA sparse and QSA index at their goal shapes), to measure
# what docs/h200/notes.md's reasons count from the kernels' constants. Then, in a call of its
# own (it waits for the marker call2), fla's recurrent GDN prefill at one_seq_8192 beside
# fla's chunked kernel, which autotunes for about 240 s in each fresh worker. Last, the
# validation-only sample audits of the dataset's own Triton and torch solutions on the samples
# added since their last H200 audit, selected by UUID (computed from the records at commit
# time: an audit of all 12 runs the already-audited ones first, which is how session 13's
# grouped step spent its limit). Files go into docs/h200/session14/, then `hf-eval bench
# report --dir docs/h200` (docs/h200/commands.txt).
#
#   bash docs/h200/tools/session14.sh stage K       # carry [".stage7/K"], K = 1..5
#   bash docs/h200/tools/session14.sh stage 6 && bash docs/h200/tools/session14.sh work 575
#                                                   # carry [".stage7/6"]
#   mkdir -p /tmp/s14/done && touch /tmp/s14/done/call2 && bash docs/h200/tools/session14.sh work 580
#   bash docs/h200/tools/session14.sh work N        # what is left
set -uo pipefail
S=/tmp/s14
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
AUDIT="python3 -m hf_eval audit --device cuda --validation-only --resume --report $S/results.jsonl"
GROUPED_UUIDS=633675e4-e6a5-52f4-bfba-3a282407bc7b,f64c6295-9e65-59c1-9b7e-a1d8eede13e9,e208540c-b14d-5692-aa57-0c27b85894ba,8b1e5d9f-13c7-5aa6-9107-8fa7f943e441,f14a32bc-39f4-5878-aafe-cdded3a6dd1e,e5b8a9a9-bf74-5f99-9f59-a65305408edf,cc69e0ec-809e-5589-bfe8-0eaa746c5ad9,6bd0a3ad-3f2a-5ff4-a9f8-46b950d7b415,29cda0aa-4819-5120-b812-13c49903bf90,2024879c-e6fc-5a3e-a6d4-c81116281265,b863b088-e0b1-5991-bc6a-09f96d266eea,8352cf0a-3cd3-5ae5-8ab0-0f319f47e155,d3f21138-9153-5e2e-9495-642976f2cc1a,415462b6-f903-5bd1-b518-85a6b2b198c1
OWN_UUIDS=017a0832-f030-56ef-9498-df2a2d53dbdb,02b5e814-05e0-5911-9bf9-c5b84c528b1e,03b8ab70-669b-5d23-ba61-580453a9c727,0765d290-b662-5bd2-bca4-7fc51368cf8b,0fde1e1d-dd41-57ef-8991-6ed5171532f6,1131159f-f44c-54f2-a291-669a88a6be0c,12893450-f18e-5075-96bc-0e1ba25d4250,14ab9d1a-56a8-5678-8b6f-8285fc8f101d,17a25494-8139-5809-9d7c-ad783b4bb287,198619bb-6470-5e6d-9acd-f22e33045e32,1b166d00-91b5-5da3-9948-383090ab4567,24d7ec4e-9bc9-5e59-9f17-4cafb482aefa,24e5274c-cab1-5063-8553-8a00cdbec3ad,2b4b2392-4745-587b-8010-eac9317005f2,45a8cc98-9511-5ad6-9344-249598e2b654,480f5aed-9b54-5972-92a0-56dd7eaa054c,491d7969-d98e-5ae0-a60b-7455dfc4b3f7,4d4600c2-20af-50a3-bca8-50ee3d2b8f02,5371dbac-4deb-53a7-b5a4-182e4f1d5740,547ec4f0-7e28-5c6f-9fb3-ab424df81d4f,55936057-e581-5d29-a246-c16c5996fb70,56649413-9d8c-578b-8878-0f305ee823fb,6429a6d4-9665-5fb7-909e-bf5437f1e676,643928c1-191e-543e-92a2-640887f96bbe,674c5f14-c0f5-57bf-91f5-9528a467bde6,693f4daa-7d65-5b51-b2e6-918db5c37c16,6b12ed60-2efc-53de-903b-01cbff30c581,6e5ada12-5274-5124-aeed-536e7f2d06da,6ec8ab90-b24a-574d-98a6-2244235b8e95,71ada6b6-e579-505a-b5c6-2411b76dd0b7,750bd1b7-ca59-59c7-bb69-4a01ee39f559,7bef7fc1-62b5-594a-a6a2-44d125f0013e,7f368769-c061-5dd8-973d-f1b78d0f0141,837e795c-13bc-5226-bc72-302be8509c94,85d72003-7683-56a0-928e-b5646946dc12,87bcf8c3-f37e-5e63-9c8a-6de4911edd43,89cc8d9c-beeb-5a7a-a06c-0263e22127ba,928b7abc-2f48-5841-9f3d-43647dc22a4b,9741c51f-507d-56fa-8f5f-944ce1077852,9a7c864c-0c89-5547-ac13-c1b8ace599f6,a1be03a0-aad6-5917-a252-546d560b82b7,a8545c01-3e69-561d-8ed7-52cce2e35d93,a8edb420-3123-5cb9-a801-eaa7b2634e8f,b2d12ef8-8472-5332-98dd-897833ebd2a9,b37e5bda-15ca-50f3-a46c-bfb19c007b2d,b3e004c7-7956-5d26-8ba8-6bdb626fd6af,b521f854-8a92-58b3-8fb1-97327ab6689b,b5dd61a0-6c1d-5cb3-8362-c335785369fd,b8e2b774-ac8e-52f0-9278-1fe5dc238df4,b9274ba9-1f39-599f-a800-d541ac785f96,c23634de-c764-5e32-8567-9a623ac761ab,cad56086-f91e-591b-b1c1-7ee45045f1a8,cb35ccf0-5a9f-5c21-a599-5e7c3f0a217d,d2c4f431-9955-5536-ad9a-cb9d022c0960,d703b2c2-0d15-5f8f-951a-9fb2272f8b7d,e4ca936e-f129-58ff-ad1b-e3d5f9346e4d,e5232897-d325-5a87-b06a-3dca182be028,e9b4a730-387b-5b7e-bc81-c9f3a0358445,ed35d763-4c5f-58bb-af9e-5a28d49a112a,f3724627-f8cd-549d-8580-a1ef2817c1b2,f4305610-3f54-59b0-80f1-98a5e4ecc0b4,ff325184-7736-51dd-83b2-46a26e1eca32,ffe5dc07-5da0-5e30-8481-5fca49732cd0
queue() {
  cat <<EOF2
qsa_sparse_fa4_b64|300|-|$TIMED --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions preferred,sglang_fa4_sparse_gqa_decode_h24_kv2 --shapes b64_ctx32k
ncu_profile|180|-|bash docs/h200/tools/ncu_profile.sh
gdn_prefill_recurrent_long|420|call2|$TIMED --definitions gdn_prefill_qk4_v8_d128_k_last --solutions preferred,fla_recurrent_gdn_prefill_qk4_v8_d128 --shapes one_seq_8192
own_samples|300|gdn_prefill_recurrent_long|$AUDIT --uuid $OWN_UUIDS --definitions dense_gemm_bf16_nt_n12288_k4096,dense_gemm_bf16_nt_n4096_k12288,dense_gemm_bf16_nt_n4096_k4096,gdn_decode_qk4_v8_d128_k_last,neighborhood_attention_3d_h8_d64_kt3_ky5_kx5,prefix_cached_block_causal_h32_d128_prefix0,qsa_index_topk_decode_qwen38_h4_d128_topk512_c4,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,sparse_mla_prefill_h64_d512_k128 --solutions torch_gdn_decode_qk4_v8_d128,torch_na3d_tiled_sdpa_h8_d64_kt3_ky5_kx5,torch_gather_sdpa_qsa_decode_h24_kv2,torch_gather_sparse_mla_h64_k128,triton_split_gather_sparse_mla_h64_k128,torch_sdpa_masked_prefix0_h32_d128,triton_paged_score_topk_qsa_index_h4,triton_tiled_gemm_bf16_n12288_k4096,triton_tiled_gemm_bf16_n4096_k12288,triton_tiled_gemm_bf16_n4096_k4096
grouped_samples|240|gdn_prefill_recurrent_long|$AUDIT --uuid $GROUPED_UUIDS --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120,triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304
EOF2
}

session_main "$@"
