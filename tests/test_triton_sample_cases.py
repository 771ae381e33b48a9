"""The Triton solutions whose check is the sample itself, every case in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so each
solution below is checked against its reference on the committed sample cases, under the
task's tolerance (the router's IDs exact, its weights under the strict FP32 bound). What
the cases exercise, per solution:

- GDN decode: the gate and beta from the raw inputs, the k-last row update and the output
  read after it (large, zero and default-scale cases included);
- mixed MLA decode: the page byte layout (FP8 + FP32 scales, FP4 + UE8M0 scales, BF16
  rope), unused and stale slots, the split online softmax and the merge with the sink;
- MoE router: the split-K partial sums, the FP32 sqrt-softplus scores, the biased top-6
  with its lower-ID tie rule (near-tie and exact-tie cases included) and the weights;
- QSA sparse GQA decode: the virtual token list (selected blocks, then trailing tokens),
  the paged gather, the split softmax and its merge;
- sparse MLA prefill: the gather through indices (topk_length, -1 holes, duplicates), the
  split online softmax and the merge with the sink.

The split kernels' one-split path (large batches) is forced once per definition. The
one-wave solutions pick their split count, and the GDN decode kernel its rows a program,
from the GPU's SM count and the batch, so every size they can pick is forced on every case
(a split that starts past a row's last selected block can still hold its trailing tokens).
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import (  # noqa: I001
    forced_sizes_test, interpreter_only, sample_case_test, single_split_test)

pytestmark = interpreter_only

SOLUTIONS = {
    "gdn_decode_qk4_v8_d128_k_last": "triton_row_parallel_gdn_decode_qk4_v8_d128",
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512":
        "triton_fused_dequant_mixed_mla_decode_h64",
    "moe_router_gemm_topk_deepseek41_d5120_e384_topk6":
        "triton_splitk_gemm_topk_router_d5120_e384",
    "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4":
        "triton_split_kv_sparse_gqa_decode_h24_kv2",
    "sparse_mla_prefill_h64_d512_k128": "triton_split_gather_sparse_mla_h64_k128",
    "sparse_mla_prefill_h64_d512_k640": "triton_split_gather_sparse_mla_h64_k640",
}
#: The solutions that split the key range and merge the splits.
SPLIT = {name: SOLUTIONS[name] for name in (
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512",
    "sparse_mla_prefill_h64_d512_k128", "sparse_mla_prefill_h64_d512_k640")}

#: The solutions that size their splits to fill one wave of the GPU.
ONE_WAVE = {
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512": "triton_one_wave_mixed_mla_decode_h64",
    "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4":
        "triton_one_wave_sparse_gqa_decode_h24_kv2",
}
#: Keys (virtual slots) per split that give each split count the solution can pick:
#: 1, 2, 4 and 8 splits of the 640 mixed MLA keys; 1, 2, 8, 17, 33 and 65 splits of the
#: 2,052 QSA slots (17 is batch 1's; 33 and 65, of 64 and 32 slots, variants').
SPLIT_SIZES = {"mixed_mla_decode_deepseek41_h64_d512_k8128_k4512": (640, 320, 160, 80),
               "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4": (4096, 1056, 288, 128,
                                                                        64, 32)}

test_sample_case_within_tolerance = sample_case_test(SOLUTIONS)
test_single_split_path = single_split_test(SPLIT)
test_one_wave_sample_case_within_tolerance = sample_case_test(ONE_WAVE)
test_every_split_count = forced_sizes_test(ONE_WAVE, SPLIT_SIZES)
#: The GDN decode kernel's rows a program (8 at the CPU's batches, up to 32 on the GPU, 64 in a
#: variant).
test_every_row_block = forced_sizes_test(
    {"gdn_decode_qk4_v8_d128_k_last": "triton_row_parallel_gdn_decode_qk4_v8_d128"},
    {"gdn_decode_qk4_v8_d128_k_last": (8, 16, 32, 64)}, chooser="_rows_per_program")
