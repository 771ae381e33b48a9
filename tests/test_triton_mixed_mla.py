"""The Triton mixed MLA decode solution on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the page
byte layout (FP8 + FP32 scales, FP4 + UE8M0 scales, BF16 rope), unused and stale slots,
the split online softmax and the merge with the sink are checked against the reference
on the committed sample cases under the task's tolerance. Speed is measured only on the
H200. Skipped when triton is not installed.
"""

from tests.triton_kit import interpreter_only, sample_case_test, single_split_test  # noqa: I001

pytestmark = interpreter_only

SOLUTIONS = {
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512":
        "triton_fused_dequant_mixed_mla_decode_h64",
}
test_sample_case_within_tolerance = sample_case_test(SOLUTIONS)
test_single_split_path = single_split_test(SOLUTIONS)
