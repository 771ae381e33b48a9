"""Rows a definition leaves open are not judged (the router): a token whose 6th and 7th
keys are closer than FP32 summation noise can meet content the audit draws itself (fresh
sets, benchmark shapes), and a correct kernel that sums in another order may pick either
expert there (H200 session 8). Exact ties and the samples' near-tie rows stay judged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from hf_eval.acceptance import compare_outputs
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import moe_router
from hf_eval.sources import compile_reference
from hf_eval.trials import InputSet, Session, settle_undecided
from tests import kit

ROOT = Path(__file__).resolve().parent.parent
ROUTER = "moe_router_gemm_topk_deepseek41_d5120_e384_topk6"


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return open_dataset(ROOT)


def _inputs() -> list[object]:
    """Three all-zero tokens (every logit 0, so the biases alone rank the experts): token 0
    (text) has a 6th-vs-7th margin of 3e-6, tokens 1 and 2 (image) an exact tie there."""
    order = -torch.arange(moe_router.EXPERTS, dtype=torch.float32) * 1e-3
    bias_text, bias_image = order.clone(), order.clone()
    bias_text[6] = bias_text[5] - 3e-6
    bias_image[6] = bias_image[5]
    w = (torch.randn(moe_router.EXPERTS, moe_router.HIDDEN,
                     generator=torch.Generator().manual_seed(0)) * 0.02).to(torch.bfloat16)
    x = torch.zeros(3, moe_router.HIDDEN, dtype=torch.bfloat16)
    return [x, w, bias_text, bias_image, torch.tensor([False, True, True]), 2.5]


def _swap_at(ids: torch.Tensor, row: int) -> torch.Tensor:
    """Expert 6 chosen instead of expert 5 in ``row`` (the other side of the boundary)."""
    out = ids.clone()
    out[row] = torch.tensor([0, 1, 2, 3, 4, 6], dtype=ids.dtype)
    return out


def test_an_open_boundary_is_not_judged_and_an_exact_tie_is(dataset):
    definition = dataset.definition(ROUTER)
    inputs = _inputs()
    assert moe_router.undecided_rows(inputs).tolist() == [True, False, False]
    ids, weights = compile_reference(definition)(*inputs)
    assert ids[0].tolist() == ids[1].tolist() == [0, 1, 2, 3, 4, 5]
    names, tolerance = list(definition.outputs), dataset.task(ROUTER).tolerance_for

    other_side = (_swap_at(ids, 0), weights)
    assert not all(v.passed for v in compare_outputs(names, other_side, (ids, weights),
                                                     tolerance))
    settled, count = settle_undecided(definition, other_side, (ids, weights), inputs)
    assert count == 1
    assert all(v.passed for v in compare_outputs(names, settled, (ids, weights), tolerance))

    wrong_tie = (_swap_at(ids, 1), weights)  # the tie rule decides row 1: lower ID wins
    settled, count = settle_undecided(definition, wrong_tie, (ids, weights), inputs)
    verdict = compare_outputs(names, settled, (ids, weights), tolerance)[0]
    assert count == 1 and not verdict.passed
    assert verdict.reason == "1 of 18 integer elements differ (exact match required)"


def test_no_sample_row_is_left_open():
    """The samples' near-tie rows (margins 2e-5 to 5e-5) and exact-tie rows stay judged."""
    for label in kit.labels(ROUTER):
        values = kit.args(ROUTER, kit.case_inputs(ROUTER, label))
        assert not moe_router.undecided_rows(values).any(), label


def test_a_session_judges_the_other_side_of_an_open_boundary_as_passed(dataset):
    """The audit's judge settles open rows only when the exact comparison failed, and
    counts them for the record's ``content.undecided_rows``."""
    definition = dataset.definition(ROUTER)
    inputs = _inputs()
    ids, weights = compile_reference(definition)(*inputs)
    truth = InputSet("s1", inputs, (ids, weights))
    session = SimpleNamespace(definition=definition, task=dataset.task(ROUTER), strict=None,
                              undecided_rows=0)
    result = Session._judge(session, [ids, weights], truth, "call")
    assert result["status"] == "PASSED" and session.undecided_rows == 0
    result = Session._judge(session, [_swap_at(ids, 0), weights], truth, "call")
    assert result["status"] == "PASSED" and session.undecided_rows == 1
    result = Session._judge(session, [_swap_at(ids, 2), weights], truth, "call")
    assert result["status"] == "INCORRECT_NUMERICAL"
    assert result["reason"] == ("call: topk_ids: 1 of 18 integer elements differ "
                                "(exact match required)")
