#!/usr/bin/env bash
# Call E (session 3): what the earlier calls left unverified on the H200.
#   1. the CUDA-only tests (side-stream work counted, loads to the requested device);
#   2. validation-only audit of every grouped-GEMM solution (sample weights regenerated here),
#      then of the QSA-attention and sparse-MLA-k128 solutions at their current sources;
#   3. benchmark shapes of the definitions whose Triton/fla solutions were never timed.
# Run from the repository root on the device machine with .whl carried (see commands.txt).
set -uo pipefail
source docs/h200/tools/device_setup.sh
cat "$OUT/env.txt"
timeout 100 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/test_adversarial.py::test_side_stream_work_is_counted \
  tests/test_store.py::test_loads_to_requested_device > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?"; tail -3 "$OUT/pytest.log"
GG=grouped_gemm_fp8_fp4_e384_n4608_k5120_g32,grouped_gemm_fp8_fp4_e384_n5120_k2304_g32
timeout 200 python3 -m hf_eval audit --device cuda --validation-only --solutions all \
  --definitions "$GG" --report "$OUT/results-gg.jsonl" > "$OUT/audit-gg.log" 2>&1
echo "audit gg rc=$?"; tail -4 "$OUT/audit-gg.log"
timeout 60 python3 -m hf_eval audit --device cuda --validation-only --solutions all \
  --definitions qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,sparse_mla_prefill_h64_d512_k128 \
  --report "$OUT/results-qs.jsonl" > "$OUT/audit-qs.log" 2>&1
echo "audit qs rc=$?"; tail -4 "$OUT/audit-qs.log"
timeout 190 python3 -m hf_eval.benchmark --out "$OUT" --definitions \
"$GG,qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4,mixed_mla_decode_deepseek41_h64_d512_k8128_k4512,moe_router_gemm_topk_deepseek41_d5120_e384_topk6,sparse_mla_prefill_h64_d512_k128,sparse_mla_prefill_h64_d512_k640,gdn_prefill_qk4_v8_d128_k_last" \
  > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -3 "$OUT/bench.log"
