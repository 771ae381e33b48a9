#!/usr/bin/env bash
# Nsight Compute on the kernels behind the goals still missed (docs/h200/notes.md,
# "By how much, and why"): one launch of each preferred kernel at its goal shape, run in
# process by profile_kernels.py (no worker, no checks: a profile, not a timing). Sections:
# SpeedOfLight (compute and DRAM throughput against peak), ComputeWorkloadAnalysis (pipe
# use, the tensor pipe among them) and Occupancy. Prints to stdout (the run's log).
#   bash results/h200/tools/ncu_profile.sh
set -u
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then echo "ncu_profile: no ncu on this machine"; exit 1; fi
"$NCU" --version | tail -1
while read -r definition solution shape; do
  echo "# ncu: $definition $solution $shape"
  "$NCU" --profile-from-start off --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section Occupancy python3 results/h200/tools/profile_kernels.py \
    "$definition" "$solution" "$shape" --calls 1 2>&1
done <<'LIST'
neighborhood_attention_3d_h16_d64_kt3_ky7_kx7 triton_na3d_brick_h16_d64_kt3_ky7_kx7 t16_y64_x96
qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4 triton_split_kv_sparse_gqa_decode_h24_kv2 b64_ctx32k
qsa_index_topk_decode_qwen38_h4_d128_topk512_c4 triton_score_bisect_select_qsa_index_h4 b64_ctx32k
LIST
