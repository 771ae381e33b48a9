"""The Triton QSA indexer solutions on every sample case, run by Triton's CPU interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the paged
gather, the FP32 scoring, the packed (score, lower-ID) sort keys of the first solution
and the bisection select of the second (threshold, ties at the threshold, prefix-sum
slots, the wide-row fallback) are checked against the reference on the committed sample
cases and on tie-heavy variants of them (exact integer match, the task's rule).
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import check_case, inputs, interpreter_only, load, sample_params  # noqa: I001

import pytest
import torch

pytestmark = interpreter_only

DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
NAMES = ["triton_paged_score_topk_qsa_index_h4", "triton_score_bisect_select_qsa_index_h4"]
CASES, CASE_IDS = sample_params({DEFINITION: NAMES[0]})


@pytest.mark.parametrize("solution", NAMES)
@pytest.mark.parametrize(("name", "case"), CASES, ids=CASE_IDS)
def test_sample_case_exact(solution, name, case):
    check_case(*load(name, solution), case)


@pytest.mark.parametrize("solution", NAMES)
def test_tie_rule_is_enforced(solution):
    """All-zero keys tie everywhere: only the 512 lowest IDs pass (the check can fail)."""
    definition, reference, entry, _ = load(DEFINITION, solution)
    case = next(c for n, c in CASES if c["label"] == "b1_all_tied_zero_keys")
    args = inputs(definition, case)
    got = entry.run(*args)
    assert torch.equal(got, reference(*args))
    assert not torch.equal(got.flip(1), reference(*args))


@pytest.mark.parametrize("wide_fallback", [False, True])
def test_select_with_many_ties_at_the_threshold(wide_fallback, monkeypatch):
    """Keys rounded to a few values: hundreds of blocks tie at the 512th score, so the
    lower-ID rule decides most of the tail; also through the torch.topk fallback."""
    definition, reference, entry, _ = load(DEFINITION, NAMES[1])
    if wide_fallback:
        monkeypatch.setattr(entry.module, "MAX_REGISTER_WIDTH", 16)
    for _, case in CASES:
        args = inputs(definition, case)
        keys = args[1]
        args[1] = (keys.float() * 2).round().clamp(-1, 1).to(keys.dtype)
        expected = reference(*args)
        assert torch.equal(entry.run(*args), expected), case["label"]
