#!/usr/bin/env bash
# Build FlashInfer's JIT modules once, outside the audit, and copy each into FlashInfer's own
# ahead-of-time directory of the installed package (flashinfer/data/aot/<name>/<name>.so, read
# first by flashinfer.jit before any JIT): the state of an AOT-built FlashInfer install. Why:
# the audit's workers are confined with a private, empty HOME, so each one JIT-compiled
# FlashInfer's modules from scratch inside the audit (the 2026-12-02 02:32 run's top-k and GDN
# prefill steps produced no record in 150 s). Built by the operator, read-only to every
# candidate: nothing one candidate writes reaches another. Runs the FlashInfer solutions'
# direct check (library_smoke.py) in three groups in parallel on the 16 CPUs; their consoles
# go to DIR/prebuild.1 ... prebuild.3. From the repository root, after the wheels' install:
#
#   bash results/h200/tools/flashinfer_prebuild.sh DIR
set -uo pipefail
dir=${1:?usage: flashinfer_prebuild.sh DIR}
aot=$(python3 -c 'import flashinfer.jit.env as e; print(e.FLASHINFER_AOT_DIR)') || exit 1
smoke="python3 results/h200/tools/library_smoke.py 200"
export FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16
$smoke flashinfer_topk_qsa_index_h4,flashinfer_topk_moe_router_e384_k6 > "$dir/prebuild.1" 2>&1 &
$smoke flashinfer_gdn_prefill_qk4_v8_d128,sglang_flashinfer_gdn_prefill_qk4_v8_d128 \
  > "$dir/prebuild.2" 2>&1 &
$smoke flashinfer_mla_sparse_mla_h64_k640,flashinfer_mla_dequant_mixed_mla_h64,\
flashinfer_gdn_decode_qk4_v8_d128,flashinfer_paged_decode_qsa_h24_kv2 > "$dir/prebuild.3" 2>&1 &
wait
unset FLASHINFER_WORKSPACE_BASE MAX_JOBS
cat "$dir"/prebuild.?
find /tmp/fiws -path '*cached_ops*' -name '*.so' | while read -r so; do
  name=$(basename "$so" .so)
  mkdir -p "$aot/$name" && cp "$so" "$aot/$name/$name.so" && echo "aot: $name"
done
