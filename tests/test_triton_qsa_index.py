"""The Triton QSA indexer solution on every sample case, run by Triton's CPU interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the paged
gather, the FP32 scoring and the packed (score, lower-ID) sort keys are checked against
the reference on the committed sample cases (exact integer match, the task's rule).
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import check_case, inputs, interpreter_only, load, sample_params  # noqa: I001

import pytest
import torch

pytestmark = interpreter_only

DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
SOLUTIONS = {DEFINITION: "triton_paged_score_topk_qsa_index_h4"}
PARAMS, IDS = sample_params(SOLUTIONS)


@pytest.mark.parametrize(("name", "case"), PARAMS, ids=IDS)
def test_sample_case_exact(name, case):
    check_case(*load(name, SOLUTIONS[name]), case)


def test_tie_rule_is_enforced():
    """All-zero keys tie everywhere: only the 512 lowest IDs pass (the check can fail)."""
    definition, reference, entry, _ = load(DEFINITION, SOLUTIONS[DEFINITION])
    case = next(c for n, c in PARAMS if c["label"] == "b1_all_tied_zero_keys")
    args = inputs(definition, case)
    got = entry.run(*args)
    assert torch.equal(got, reference(*args))
    assert not torch.equal(got.flip(1), reference(*args))
