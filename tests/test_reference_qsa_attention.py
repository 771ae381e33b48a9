"""The QSA sparse GQA decode reference, its torch solution and its sample generator.

The reference is checked against an independent formulation: the visible token list is
materialised with plain Python (a set of token positions built from block_ids and the
trailing rule), K/V rows are looked up one token at a time through the page table, and
attention is computed per query head in FP64. The sample cases are checked to
discriminate: plausible wrong kernels (trailing tokens dropped, all tokens attended,
wrong GQA head mapping, wrong scale, page table ignored) must fail the task tolerance on
at least one of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from flashinfer_bench.data import Definition as FIDefinition
from flashinfer_bench.data import Solution as FISolution

from hf_eval.families import qsa_attention
from tests import kit

NAME = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
SOLUTION = "torch_gather_sdpa_qsa_decode_h24_kv2"
INPUT_ORDER = ["Q", "K_pages", "V_pages", "page_table", "block_ids", "context_lens"]
ATOL, RTOL = 0.005, 0.016


# This file's definition and solution, loaded through the harness (tests/kit.py).
definition, reference, solution, cases, case_inputs, case_reference, LABELS = kit.bind(
    NAME, SOLUTION)


def _args(inputs: dict) -> list:
    return [inputs[n] for n in INPUT_ORDER]


def _within_tolerance(got: torch.Tensor, want: torch.Tensor) -> bool:
    got, want = got.float(), want.float()
    return bool(((got - want).abs() <= ATOL + RTOL * want.abs()).all())


# ------------------------------------------------------------ independent formulation
def visible_tokens(block_ids: list[int], length: int) -> list[int]:
    """The contract's visible set, written out token by token."""
    complete = length // 4
    tokens = set()
    for j in block_ids:
        if j != -1:
            tokens.update(range(4 * j, 4 * j + 4))
    tokens.update(range(4 * complete, length))
    return sorted(tokens)


def independent_attention(inputs: dict) -> torch.Tensor:
    """FP64 attention over an explicit list of visible tokens, one query head at a time."""
    q = inputs["Q"].double()
    k_pages, v_pages = inputs["K_pages"].double(), inputs["V_pages"].double()
    page_table = inputs["page_table"].tolist()
    batch, heads, dim = q.shape
    out = torch.zeros(batch, heads, dim, dtype=torch.float64)
    for b, length in enumerate(inputs["context_lens"].tolist()):
        tokens = visible_tokens(inputs["block_ids"][b].tolist(), length)
        where = [(page_table[b][t // 64], t % 64) for t in tokens]
        k = torch.stack([k_pages[p, s] for p, s in where])  # [T, 2, D]
        v = torch.stack([v_pages[p, s] for p, s in where])
        for h in range(heads):
            kv = h // (heads // k.shape[1])
            logits = (k[:, kv] @ q[b, h]) / math.sqrt(dim)
            weights = torch.exp(logits - logits.max())
            out[b, h] = (weights / weights.sum()) @ v[:, kv]
    return out


def _random_inputs(seed: int, lengths: list[int], picks: list[list[int]]) -> dict:
    """Small crafted inputs (unit-normal values, shuffled pages) for the reference tests."""
    gen = np.random.default_rng(seed)
    pages_needed = [math.ceil(n / 64) for n in lengths]
    total = sum(pages_needed) + 1
    perm = torch.from_numpy(gen.permutation(total)).int()
    table = torch.full((len(lengths), max(pages_needed) + 1), -1, dtype=torch.int32)
    start = 0
    for b, count in enumerate(pages_needed):
        table[b, :count] = perm[start:start + count]
        start += count
    block_ids = torch.full((len(lengths), 512), -1, dtype=torch.int32)
    for b, chosen in enumerate(picks):
        block_ids[b, : len(chosen)] = torch.tensor(sorted(chosen), dtype=torch.int32)

    def draw(*shape: int, std: float = 1.0) -> torch.Tensor:
        return torch.from_numpy(gen.standard_normal(shape, dtype=np.float32) * std).bfloat16()

    return {"Q": draw(len(lengths), 24, 256, std=2.0), "K_pages": draw(total, 64, 2, 256),
            "V_pages": draw(total, 64, 2, 256), "page_table": table, "block_ids": block_ids,
            "context_lens": torch.tensor(lengths, dtype=torch.int32)}


def _reference_close_to_truth(inputs: dict) -> None:
    got = reference()["run"](*_args(inputs))
    truth = independent_attention(inputs)
    assert got.dtype == torch.bfloat16 and got.shape == truth.shape
    # FP32 math then one bf16 rounding: within a bf16 half-ulp plus FP32 noise.
    err = (got.double() - truth).abs()
    assert bool((err <= 2.0 ** -8 * truth.abs() + 1e-5).all()), float(err.max())


def test_reference_matches_fp64_on_crafted_inputs() -> None:
    gen = np.random.default_rng(3)
    picks = [sorted(gen.choice(75, size=20, replace=False).tolist()), [], [0, 5, 9],
             list(range(16))]
    _reference_close_to_truth(_random_inputs(4, [301, 3, 40, 64], picks))


@pytest.mark.parametrize("label", LABELS)
def test_reference_matches_fp64_on_samples(label: str) -> None:
    _reference_close_to_truth(case_inputs(label))


def test_reference_does_not_mutate_inputs() -> None:
    kit.assert_reference_keeps_inputs(NAME, "b2_sparse_shared_prefix")


def test_single_visible_token_outputs_its_value() -> None:
    """L = 1: the softmax has one term, so the output is the current token's V (exactly)."""
    inputs = case_inputs("b3_trailing_only")
    page = int(inputs["page_table"][0, 0])
    value = inputs["V_pages"][page, 0]                        # [2, 256]
    want = value.repeat_interleave(12, dim=0)                 # head h reads KV head h // 12
    assert torch.equal(case_reference("b3_trailing_only")[0], want)


# ------------------------------------------------------------------- torch solution
@pytest.mark.parametrize("label", LABELS)
def test_solution_matches_reference(label: str) -> None:
    got = kit.run_keeping_inputs(solution()["run"], case_inputs(label), _args)
    want = case_reference(label)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert _within_tolerance(got, want)


def _wrong(inputs: dict, *, trailing: bool = True, dense: bool = False,
           gqa: str = "block", scale: float | None = None, paged: bool = True) -> torch.Tensor:
    """A plausible but wrong sparse decode with one mistake switched on (FP32)."""
    q = inputs["Q"].float()
    k_pages, v_pages = inputs["K_pages"].float(), inputs["V_pages"].float()
    batch, heads, dim = q.shape
    out = torch.zeros(batch, heads, dim)
    for b, length in enumerate(inputs["context_lens"].tolist()):
        if dense:
            tokens = list(range(length))
        else:
            ids = [j for j in inputs["block_ids"][b].tolist() if j != -1]
            tokens = [4 * j + r for j in ids for r in range(4)]
            if trailing:
                tokens += list(range(4 * (length // 4), length))
        if not tokens:
            continue
        t = torch.tensor(tokens)
        pages = inputs["page_table"][b, t // 64].long() if paged else t // 64
        k, v = k_pages[pages, t % 64], v_pages[pages, t % 64]
        for h in range(heads):
            kv = h // 12 if gqa == "block" else h % 2
            logits = (k[:, kv] @ q[b, h]) * (scale if scale else dim ** -0.5)
            out[b, h] = torch.softmax(logits, 0) @ v[:, kv]
    return out.bfloat16()


MISTAKES = [{"trailing": False}, {"dense": True}, {"gqa": "interleaved"},
            {"scale": 128 ** -0.5}, {"paged": False}]


@pytest.mark.parametrize("mistake", MISTAKES)
def test_samples_catch_wrong_kernels(mistake: dict) -> None:
    """Each mistake misses the tolerance on at least one sample case."""
    caught = [label for label in LABELS
              if not _within_tolerance(_wrong(case_inputs(label), **mistake),
                                       case_reference(label))]
    assert caught, f"no sample case catches {mistake}"


def test_wrong_kernel_harness_is_right_without_mistakes() -> None:
    for label in LABELS:
        assert _within_tolerance(_wrong(case_inputs(label)), case_reference(label))


# ----------------------------------------------------------------------- generator
@pytest.mark.parametrize("label", LABELS)
def test_generator_deterministic_and_shaped(label: str) -> None:
    case = next(c for c in cases() if c["label"] == label)
    kit.assert_generator_deterministic(NAME, qsa_attention.generate, case)


def test_cases_cover_the_edge_cases() -> None:
    """The brief's edge cases are present and the current token is visible everywhere."""
    lengths, partial, trailing_only, multi = set(), False, False, False
    for label in LABELS:
        inputs = case_inputs(label)
        multi |= inputs["Q"].shape[0] > 1
        for b, length in enumerate(inputs["context_lens"].tolist()):
            ids = inputs["block_ids"][b].tolist()
            valid = [j for j in ids if j != -1]
            lengths.add(length % 4)
            partial |= 0 < len(valid) < 512
            trailing_only |= not valid
            assert length - 1 in visible_tokens(ids, length), (label, b)
            # Outputs are not near zero (a zero kernel must fail).
        assert float(case_reference(label).float().abs().mean()) > 0.1
    assert lengths == {0, 1, 2, 3} and partial and trailing_only and multi
    full = case_inputs("b1_full_topk_l2090")["block_ids"]
    assert int((full >= 0).sum()) == 512


# ------------------------------------------------------------------ JSON artefacts
def test_json_files_validate_and_task_is_consistent() -> None:
    task = kit.checked_task_json(NAME, SOLUTION, FIDefinition, FISolution)
    assert task["tolerance"]["atol"] == ATOL and task["tolerance"]["rtol"] == RTOL
    kit.assert_dev_held_out(NAME, task["dev"])
    assert task["baseline"]["solution"] == SOLUTION
    # SGLang's block expansion and FA4's varlen kernel, audited on the H200
    # (results/h200/2026-12-02-0232-library-engine-audits)
    assert task["engine_baseline"] == "sglang_fa4_sparse_gqa_decode_h24_kv2"
    assert task["preferred"]["cpu"]["solution"] == SOLUTION
    kit.assert_family_data(NAME, "hf_eval.families.qsa_attention")
    assert len(cases()) >= 4
