"""Rows a definition leaves open are judged by the answers it allows there, not exactly
(the router and the QSA indexer): a token whose 6th and 7th keys, or a request whose
512th and 513th scores, are closer than FP32 rounding can meet content the audit draws
itself (fresh sets, benchmark shapes), and a correct kernel that sums in another order
may choose either side there (the H200 runs of 2026-12-02, results/h200/2026-12-02-*).
Any other answer in such a row, exact ties and the samples' rows stay judged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from hf_eval.data.sources import compile_reference
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import moe_router, qsa_index
from hf_eval.judge.acceptance import compare_outputs
from hf_eval.judge.trials import InputSet, Session, settle_undecided
from tests import kit

ROOT = Path(__file__).resolve().parent.parent
ROUTER = "moe_router_gemm_topk_deepseek41_d5120_e384_topk6"
ALL = torch.ones(3, dtype=torch.bool)  # every row marked as differing from the truth


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
    ids, weights = compile_reference(definition)(*inputs)
    assert moe_router.undecided_rows(inputs, (ids, weights), ALL).tolist() == [True, False, False]
    assert ids[0].tolist() == ids[1].tolist() == [0, 1, 2, 3, 4, 5]
    names, tolerance = list(definition.outputs), dataset.task(ROUTER).tolerance_for

    other_side = (_swap_at(ids, 0), weights)
    assert not all(v.passed for v in compare_outputs(names, other_side, (ids, weights),
                                                     tolerance))
    truth, count = settle_undecided(definition, other_side, (ids, weights), inputs)
    assert count == 1
    assert all(v.passed for v in compare_outputs(names, other_side, truth, tolerance))
    # the row's weights are still judged: those of the experts it chose, not any
    for forged in (torch.zeros_like(weights), torch.full_like(weights, 1e6)):
        truth, count = settle_undecided(definition, (other_side[0], forged), (ids, weights),
                                        inputs)
        verdicts = compare_outputs(names, (other_side[0], forged), truth, tolerance)
        assert count == 1 and [v.passed for v in verdicts] == [True, False]

    garbage = ids.clone()
    garbage[0] = torch.tensor([10, 11, 12, 13, 14, 15], dtype=ids.dtype)  # far below
    truth, count = settle_undecided(definition, (garbage, weights), (ids, weights), inputs)
    verdict = compare_outputs(names, (garbage, weights), truth, tolerance)[0]
    assert count == 0 and not verdict.passed

    wrong_tie = (_swap_at(ids, 1), weights)  # the tie rule decides row 1: lower ID wins
    truth, count = settle_undecided(definition, wrong_tie, (ids, weights), inputs)
    verdict = compare_outputs(names, wrong_tie, truth, tolerance)[0]
    assert count == 0 and not verdict.passed
    assert verdict.reason == "1 of 18 integer elements differ (exact match required)"


def test_no_sample_row_is_left_open():
    """The samples' near-tie rows (margins 2e-5 to 5e-5) and exact-tie rows stay judged."""
    for label in kit.labels(ROUTER):
        values = kit.args(ROUTER, kit.case_inputs(ROUTER, label))
        outputs = compile_reference(kit.definition(ROUTER))(*values)
        every_row = torch.ones(len(outputs[0]), dtype=torch.bool)
        assert not moe_router.undecided_rows(values, outputs, every_row).any(), label


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


# ------------------------------------------------------------------ the QSA indexer
QSA = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"


def _qsa_inputs() -> list[object]:
    """Two requests of 2,048 random blocks (as the benchmark draws them): the first seed
    whose request 0 fails the definition's validity rule and whose request 1 passes it."""
    blocks, pages = 2048, 2048 // qsa_index.PAGE_SIZE
    for seed in range(40):
        gen = torch.Generator().manual_seed(seed)
        q = torch.randn(2, qsa_index.HEADS, qsa_index.DIM, generator=gen).to(torch.bfloat16)
        pool = torch.randn(2 * pages, qsa_index.PAGE_SIZE, qsa_index.DIM,
                           generator=gen).to(torch.bfloat16)
        table = torch.arange(2 * pages, dtype=torch.int32).reshape(2, pages)
        keys = [pool[table[b].long()].reshape(blocks, qsa_index.DIM) for b in range(2)]
        robust = [qsa_index.selection_is_robust(q[b], keys[b]) for b in range(2)]
        if robust == [False, True]:
            return [q, pool, table, torch.tensor([blocks, blocks], dtype=torch.int32)]
    raise AssertionError("no seed below 40 gives an open and a closed request")


def _qsa_swap(ids: torch.Tensor, row: int, inputs: list[object]) -> torch.Tensor:
    """Row ``row`` with its lowest-scoring chosen block exchanged for the highest-scoring
    unchosen one (FP64 scores): the other side of the 512th place."""
    q, pool, table, _ = inputs
    keys = pool[table[row].long()].reshape(-1, qsa_index.DIM)
    scores = qsa_index.score_intervals(q[row], keys)[0]
    chosen = torch.zeros(keys.shape[0], dtype=torch.bool)
    chosen[ids[row].long()] = True
    weakest = int(torch.where(chosen, scores, torch.inf).argmin())
    strongest = int(torch.where(chosen, -torch.inf, scores).argmax())
    chosen[weakest], chosen[strongest] = False, True
    out = ids.clone()
    out[row] = torch.nonzero(chosen).flatten().to(ids.dtype)
    return out


def test_qsa_index_open_requests_allow_the_other_side_of_the_512th_place_only(dataset):
    definition = dataset.definition(QSA)
    inputs = _qsa_inputs()
    ids = compile_reference(definition)(*inputs)  # one output: the tensor itself
    names, tolerance = list(definition.outputs), dataset.task(QSA).tolerance_for

    def verdict(outputs):
        truth, count = settle_undecided(definition, outputs, (ids,), inputs)
        return count, compare_outputs(names, outputs, truth, tolerance)[0]

    assert qsa_index.undecided_rows(inputs, (ids,), ALL[:2]).tolist() == [True, False]
    count, result = verdict((_qsa_swap(ids, 0, inputs),))
    assert count == 1 and result.passed

    garbage = ids.clone()
    garbage[0] = torch.arange(qsa_index.TOPK, dtype=ids.dtype)  # not a top-512 at all
    count, result = verdict((garbage,))
    assert count == 0 and not result.passed

    count, result = verdict((_qsa_swap(ids, 1, inputs),))  # a closed request is judged
    assert count == 0 and not result.passed


def test_no_qsa_index_sample_request_is_left_open():
    for label in kit.labels(QSA):
        values = kit.args(QSA, kit.case_inputs(QSA, label))
        ids = compile_reference(kit.definition(QSA))(*values)
        every_row = torch.ones(len(ids), dtype=torch.bool)
        assert not qsa_index.undecided_rows(values, (ids,), every_row).any(), label
