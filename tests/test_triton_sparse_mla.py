"""The Triton sparse MLA prefill solutions on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the gather
through indices (topk_length, -1 holes, duplicates), the split online softmax and the
merge with the sink are checked against the reference on the committed sample cases
under the task's tolerance. Speed is measured only on the H200. Skipped when triton is
not installed.
"""

from tests.triton_kit import interpreter_only, sample_case_test, single_split_test  # noqa: I001

pytestmark = interpreter_only

SOLUTIONS = {
    "sparse_mla_prefill_h64_d512_k128": "triton_split_gather_sparse_mla_h64_k128",
    "sparse_mla_prefill_h64_d512_k640": "triton_split_gather_sparse_mla_h64_k640",
}
test_sample_case_within_tolerance = sample_case_test(SOLUTIONS)
test_single_split_path = single_split_test(SOLUTIONS)
