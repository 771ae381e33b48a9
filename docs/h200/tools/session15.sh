#!/usr/bin/env bash
# Session 15 on the H200, prepared in session 14 and not yet run: what the coverage table of
# docs/h200/performance.md lists for the dataset's own solutions after session 14.
# First the torch QSA sparse baseline, whose CUDA path runs FP32 SDPA since session 14 (its
# bf16 version failed 2 of 12 samples there): its 12 samples, then the three benchmark
# shapes beside the preferred solution, through `hf-eval bench run --samples` (its timings
# are the "x torch" baseline of that definition, and its lines so far timed the bf16
# version). Then the Triton FP8-MMA grouped kernels' samples not yet audited on the H200,
# selected by UUID (computed from the records at commit time; about 60 s a case there).
# Files go into docs/h200/session15/, then `hf-eval bench report --dir docs/h200`
# (docs/h200/commands.txt). The report refuses a session folder whose ceilings name another
# GPU: if the device tool lends an H100, file its records under docs/h100/ instead.
#
#   bash docs/h200/tools/session15.sh stage K       # carry [".stage7/K"], K = 1..5
#   bash docs/h200/tools/session15.sh stage 6 && bash docs/h200/tools/session15.sh work 575
#                                                   # carry [".stage7/6"]; later calls: work only
set -uo pipefail
S=/tmp/s15
PIECES=6
# shellcheck source=docs/h200/tools/session_lib.sh
. docs/h200/tools/session_lib.sh

TIMED="python3 -m hf_eval bench run --out $S"
AUDIT="python3 -m hf_eval audit --device cuda --validation-only --resume --report $S/results.jsonl"
N4608=e208540c-b14d-5692-aa57-0c27b85894ba,8b1e5d9f-13c7-5aa6-9107-8fa7f943e441,f14a32bc-39f4-5878-aafe-cdded3a6dd1e,e5b8a9a9-bf74-5f99-9f59-a65305408edf,cc69e0ec-809e-5589-bfe8-0eaa746c5ad9
N5120=6bd0a3ad-3f2a-5ff4-a9f8-46b950d7b415,29cda0aa-4819-5120-b812-13c49903bf90,2024879c-e6fc-5a3e-a6d4-c81116281265,b863b088-e0b1-5991-bc6a-09f96d266eea,8352cf0a-3cd3-5ae5-8ab0-0f319f47e155,d3f21138-9153-5e2e-9495-642976f2cc1a,415462b6-f903-5bd1-b518-85a6b2b198c1
queue() {
  cat <<EOF2
qsa_torch_fp32|300|-|$TIMED --samples --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 --solutions preferred,torch_gather_sdpa_qsa_decode_h24_kv2
grouped_n4608_samples|330|-|$AUDIT --uuid $N4608 --definitions grouped_gemm_fp8_fp4_e384_n4608_k5120_g32 --solutions triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120
grouped_n5120_samples|450|-|$AUDIT --uuid $N5120 --definitions grouped_gemm_fp8_fp4_e384_n5120_k2304_g32 --solutions triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304
EOF2
}

session_main "$@"
