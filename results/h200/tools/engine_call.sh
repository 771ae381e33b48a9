#!/usr/bin/env bash
# Engine baselines on the H200: the last call of a staging sequence.
#
# Before it, on the CPU machine (the wheels are never committed):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform any \
#     flashinfer-python==0.7.2.post1 flash-attn-4==4.0.0b36 sgl-flash-mla==1.0.0 \
#     nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
#     nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 \
#     apache-tvm-ffi quack-kernels torch-c-dlpack-ext -d .stagewheels
#   then stage .stagewheels in pieces a call can carry (.stage/K/), with the script
#   /tmp/stage/stage whose `install` installs them; .whl/ as for the 2026-12-01 calls
# (the library solutions' set of results/h200/2026-12-02-library-wheels/, plus
# sgl-flash-mla, 9.9 MB). Calls 1..N-1 copy their part
# to /tmp/stage; this script is the command of call N (carry [".stage/N", ".whl"]), within
# ~30 s of the previous call. It installs the parts, runs the direct check of every engine
# baseline on every sample case, then the audit runner on the new baselines' definitions.
#
# What it should show (docs/interface-audit; CPU evidence in tests/test_engine_baselines.py):
# - PASS on every case for sglang_moe_fused_gate_router_e384_k6 (exact_ties_t12 included),
#   sglang_fa4_sparse_gqa_decode_h24_kv2, sglang_flashmla_sparse_prefill_h64_k128/_k640 and
#   the plain-torch baselines (torch_linear_*, cudnn_sdpa_*, torch_sdpa_*, sglang_flex_na3d_*);
# - sglang_packed_decode_gdn_decode_qk4_v8_d128: PASS except b2_large_state, FAIL on
#   new_state only (about 51 elements: SGLang's BF16 beta); output passes;
# - sglang_flashinfer_gdn_prefill_qk4_v8_d128: PASS except large_state_20_57, FAIL on
#   new_state (BF16 beta; FlashInfer's own BF16 intermediates may add more);
# - an ERROR line names what did not import or build (e.g. flash_mla under torch 2.11.0:
#   its stable-ABI symbols resolve offline, the load itself is first tried here).
set -uo pipefail
start=$SECONDS
source results/h200/tools/device_setup.sh      # pydantic, fla-core from .whl; sets PYTHONPATH
source /tmp/stage/stage install             # the staged parts; prepends to PYTHONPATH
timeout 330 python3 results/h200/tools/engine_smoke.py --cases all --timeout 150 --budget 320 \
  > "$OUT/engine-smoke.log" 2>&1
echo "smoke rc=$? at $((SECONDS - start)) s"; cat "$OUT/engine-smoke.log"
timeout 200 python3 -m hf_eval audit --device cuda --suite first \
  --report "$OUT/results-engine.jsonl" \
  --definitions gdn_decode_qk4_v8_d128_k_last,moe_router_gemm_topk_deepseek41_d5120_e384_topk6,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,sparse_mla_prefill_h64_d512_k128 \
  --solutions sglang_packed_decode_gdn_decode_qk4_v8_d128,sglang_moe_fused_gate_router_e384_k6,sglang_fa4_sparse_gqa_decode_h24_kv2,sglang_flashmla_sparse_prefill_h64_k128 \
  > "$OUT/audit-engine.log" 2>&1
echo "audit rc=$? at $((SECONDS - start)) s"; tail -30 "$OUT/audit-engine.log"
