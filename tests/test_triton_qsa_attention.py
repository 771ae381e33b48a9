"""The Triton QSA sparse GQA decode solution on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the virtual
token list (selected blocks, then trailing tokens), the paged gather, the split softmax
and its merge are checked against the reference on the committed sample cases under the
task's tolerance.
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import interpreter_only, sample_case_test  # noqa: I001

pytestmark = interpreter_only

SOLUTIONS = {
    "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4":
        "triton_split_kv_sparse_gqa_decode_h24_kv2",
}
test_sample_case_within_tolerance = sample_case_test(SOLUTIONS)
