#!/usr/bin/env bash
# Issue 12: the audit (validation only, unchanged tolerances, every sample workload) of one
# group of the FlashAttention-4 / FlashInfer solutions, on a warm machine whose /tmp/site
# holds the staged wheels (docs/h200/library-wheels.txt). Every solution gets a fresh
# confined worker, so FlashInfer's nvcc JIT and the CuTe-DSL compiles happen again in each
# (into the worker's private dir): allow minutes per group.
# usage: bash docs/h200/tools/call_lib_audit.sh fa4|gdn_topk|paged_mla [TIMEOUT_S]
set -uo pipefail
start=$SECONDS
case "${1:?group: fa4, gdn_topk or paged_mla}" in
  fa4)
    sols=fa4_dense_h32_d128,fa4_dense_h32_d64,fa4_prefix_cached_h32_d128,fa4_segments_prefix0_h32_d128
    defs=noncausal_dense_attention_h32_d128,noncausal_dense_attention_h32_d64,prefix_cached_block_causal_h32_d128,prefix_cached_block_causal_h32_d128_prefix0 ;;
  gdn_topk)
    sols=flashinfer_gdn_prefill_qk4_v8_d128,flashinfer_gdn_decode_qk4_v8_d128,flashinfer_topk_qsa_index_h4,flashinfer_topk_moe_router_e384_k6
    defs=gdn_prefill_qk4_v8_d128_k_last,gdn_decode_qk4_v8_d128_k_last,qsa_index_topk_decode_qwen38_h4_d128_topk512_c4,moe_router_gemm_topk_deepseek41_d5120_e384_topk6 ;;
  paged_mla)
    sols=flashinfer_paged_decode_qsa_h24_kv2,flashinfer_mla_sparse_mla_h64_k128,flashinfer_mla_sparse_mla_h64_k640,flashinfer_mla_dequant_mixed_mla_h64
    defs=qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640,mixed_mla_decode_deepseek41_h64_d512_k8128_k4512 ;;
  *) echo "unknown group $1" >&2; exit 2 ;;
esac
export PYTHONPATH="/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages:$PWD" \
  PYTHONUNBUFFERED=1 HF_EVAL_CACHE=/tmp/hfc
timeout "${2:-560}" python3 -m hf_eval audit --device cuda --validation-only \
  --solutions "$sols" --definitions "$defs" --report "$OUT/results-lib-$1.jsonl" \
  > "$OUT/audit-lib-$1.log" 2>&1
echo "audit $1 rc=$? at $((SECONDS - start)) s"
grep -E "│|report:" "$OUT/audit-lib-$1.log" | tail -20
