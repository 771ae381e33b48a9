"""The Triton MoE router solution on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the split-K
partial sums, the FP32 sqrt-softplus scores, the biased top-6 with its lower-ID tie rule
(near-tie and exact-tie cases included) and the weights are checked against the
reference on the committed sample cases: IDs exact, weights under the strict FP32 bound.
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import interpreter_only, sample_case_test  # noqa: I001

pytestmark = interpreter_only

SOLUTIONS = {
    "moe_router_gemm_topk_deepseek41_d5120_e384_topk6":
        "triton_splitk_gemm_topk_router_d5120_e384",
}
test_sample_case_within_tolerance = sample_case_test(SOLUTIONS)
