"""The QSA indexer reference, its torch solution and its sample generator.

The reference is checked against an independent selection: every score is evaluated with
``math.fsum`` over Python floats (products of bf16 values are exact in a double, fsum
rounds the sum once), blocks are looked up one by one through the page table, and the
selection is a full Python sort on ``(-score, block id)``. The sample cases are checked to
discriminate: plausible wrong kernels (no masking of stale slots, ties to the higher ID,
page table ignored, scores rounded to bf16) must fail on at least one of them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from flashinfer_bench.data import Definition as FIDefinition
from flashinfer_bench.data import Solution as FISolution

from hf_eval.families import qsa_index
from tests import kit

NAME = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
SOLUTION = "torch_gather_topk_qsa_index_h4"
INPUT_ORDER = ["Q_idx", "Kc_pages", "page_table", "num_complete_blocks"]
TOPK = 512


# This file's definition and solution, loaded through the harness (tests/kit.py).
definition, reference, solution, cases, case_inputs, case_reference, LABELS = kit.bind(
    NAME, SOLUTION)


def _args(inputs: dict) -> list:
    return [inputs[n] for n in INPUT_ORDER]


# ------------------------------------------------------------ independent formulation
def independent_block_ids(inputs: dict) -> list[list[int]]:
    """Selection by exact scores, one block at a time, full sort with the tie rule."""
    q = inputs["Q_idx"].double().tolist()
    pool = inputs["Kc_pages"]
    page_table = inputs["page_table"].tolist()
    page_size = pool.shape[1]
    rows = []
    for b, n in enumerate(inputs["num_complete_blocks"].tolist()):
        if n <= TOPK:
            chosen = list(range(n))
        else:
            scores = []
            for j in range(n):
                key = pool[page_table[b][j // page_size], j % page_size].double().tolist()
                dots = [math.fsum(qv * kv for qv, kv in zip(q[b][h], key))
                        for h in range(len(q[b]))]
                scores.append(math.fsum(max(d, 0.0) for d in dots))
            chosen = sorted(sorted(range(n), key=lambda j: (-scores[j], j))[:TOPK])
        rows.append(chosen + [-1] * (TOPK - len(chosen)))
    return rows


def _pool_inputs(q: torch.Tensor, keys: list[torch.Tensor], seed: int) -> dict:
    """Inputs holding ``keys[b]`` ([n_b, 128]) on shuffled pages, for crafted tests."""
    gen = np.random.default_rng(seed)
    pages_needed = [math.ceil(k.shape[0] / 64) for k in keys]
    total = sum(pages_needed) + 1
    perm = gen.permutation(total)
    pool = torch.from_numpy(gen.standard_normal((total, 64, 128), dtype=np.float32) * 4)
    table = torch.full((len(keys), max(pages_needed) + 1), -1, dtype=torch.int32)
    start = 0
    for b, k in enumerate(keys):
        own = torch.from_numpy(perm[start:start + pages_needed[b]]).long()
        start += pages_needed[b]
        table[b, : own.numel()] = own.int()
        j = torch.arange(k.shape[0])
        pool[own[j // 64], j % 64] = k.float()
    return {"Q_idx": q.bfloat16(), "Kc_pages": pool.bfloat16(), "page_table": table,
            "num_complete_blocks": torch.tensor([k.shape[0] for k in keys], dtype=torch.int32)}


def test_reference_matches_independent_on_crafted_ties() -> None:
    """Keys drawn from 40 distinct vectors: many exact ties at positive scores."""
    gen = np.random.default_rng(7)
    q = torch.from_numpy(gen.standard_normal((2, 4, 128), dtype=np.float32))
    palette = torch.from_numpy(gen.standard_normal((40, 128), dtype=np.float32)).bfloat16()
    keys = [palette[torch.from_numpy(gen.integers(0, 40, size=n))] for n in (700, 530)]
    inputs = _pool_inputs(q, keys, 8)
    got = reference()["run"](*_args(inputs))
    assert got.dtype == torch.int32 and got.shape == (2, TOPK)
    assert got.tolist() == independent_block_ids(inputs)


def test_reference_matches_independent_on_random_pool() -> None:
    gen = np.random.default_rng(11)
    q = torch.from_numpy(gen.standard_normal((3, 4, 128), dtype=np.float32))
    keys = [torch.from_numpy(gen.standard_normal((n, 128), dtype=np.float32))
            for n in (0, 300, 777)]
    inputs = _pool_inputs(q, keys, 12)
    assert reference()["run"](*_args(inputs)).tolist() == independent_block_ids(inputs)


@pytest.mark.parametrize("label", ["b1_n1100", "b2_relu_ties", "b2_zero_blocks",
                                   "b1_all_tied_zero_keys"])
def test_reference_matches_independent_on_samples(label: str) -> None:
    assert case_reference(label).tolist() == independent_block_ids(case_inputs(label))


def test_reference_does_not_mutate_inputs() -> None:
    kit.assert_reference_keeps_inputs(NAME, "b4_mixed_stale_tail")


# ------------------------------------------------------------------- torch solution
@pytest.mark.parametrize("label", LABELS)
def test_solution_matches_reference_exactly(label: str) -> None:
    got = kit.run_keeping_inputs(solution()["run"], case_inputs(label), _args)
    assert got.dtype == torch.int32
    assert torch.equal(got, case_reference(label))


def test_solution_scoring_path_matches_reference() -> None:
    """The CPU shortcut (no request above 512 blocks) must not hide the scoring path."""
    gen = np.random.default_rng(5)
    q = torch.from_numpy(gen.standard_normal((2, 4, 128), dtype=np.float32))
    keys = [torch.zeros(0, 128), torch.from_numpy(gen.standard_normal((600, 128),
                                                                     dtype=np.float32))]
    inputs = _pool_inputs(q, keys, 6)
    assert torch.equal(solution()["run"](*_args(inputs)), reference()["run"](*_args(inputs)))


def _wrong(inputs: dict, *, mask: bool = True, lower_wins: bool = True, paged: bool = True,
           bf16_scores: bool = False) -> torch.Tensor:
    """A plausible but wrong indexer with one mistake switched on."""
    pool, table = inputs["Kc_pages"], inputs["page_table"].long()
    out = torch.full((table.shape[0], TOPK), -1, dtype=torch.int32)
    for b, n in enumerate(inputs["num_complete_blocks"].tolist()):
        slots = table.shape[1] * 64 if not mask else n
        j = torch.arange(slots)
        page = table[b, j // 64].clamp_min(0) if paged else (j // 64) % pool.shape[0]
        dots = pool[page, j % 64].float() @ inputs["Q_idx"][b].float().T
        if bf16_scores:
            dots = dots.bfloat16().float()
        scores = torch.relu(dots).sum(1).double()
        order = sorted(range(slots), key=lambda i: (-float(scores[i]),
                                                    i if lower_wins else -i))
        chosen = sorted(order[: min(TOPK, slots)])
        out[b, : len(chosen)] = torch.tensor(chosen, dtype=torch.int32)
    return out


@pytest.mark.parametrize("mistake", [{"mask": False}, {"lower_wins": False}, {"paged": False},
                                     {"bf16_scores": True}])
def test_samples_catch_wrong_kernels(mistake: dict) -> None:
    """Each mistake changes the output on at least one sample case."""
    caught = [label for label in LABELS
              if not torch.equal(_wrong(case_inputs(label), **mistake), case_reference(label))]
    assert caught, f"no sample case catches {mistake}"


def test_wrong_kernel_harness_is_right_without_mistakes() -> None:
    """The mistake-free variant of ``_wrong`` agrees, so failures above are the mistakes."""
    for label in ("b1_n1100", "b2_relu_ties"):
        assert torch.equal(_wrong(case_inputs(label)), case_reference(label))


# ----------------------------------------------------------------------- generator
@pytest.mark.parametrize("label", LABELS)
def test_generator_deterministic_and_shaped(label: str) -> None:
    case = next(c for c in cases() if c["label"] == label)
    first = kit.assert_generator_deterministic(NAME, qsa_index.generate, case)
    other = qsa_index.generate(kit.definition(NAME), case["params"], case["seed"] + 1)
    assert not torch.equal(first["Q_idx"], other["Q_idx"])


def test_cases_cover_the_edge_cases() -> None:
    """The notes' claims hold: <=512 and >512 requests, empty request, exact ties."""
    counts = {label: case_inputs(label)["num_complete_blocks"].tolist() for label in LABELS}
    assert any(n <= TOPK for c in counts.values() for n in c)
    assert any(n > TOPK for c in counts.values() for n in c)
    assert any(n == 0 for c in counts.values() for n in c)
    assert len(LABELS) >= 5
    assert case_reference("b1_all_tied_zero_keys")[0].tolist() == list(range(TOPK))
    assert (case_reference("b2_zero_blocks")[0] == -1).all()
    table = case_inputs("b1_n1100")["page_table"][0]
    assert not torch.equal(table[table >= 0], torch.arange(int((table >= 0).sum())).int())
    # relu_ties: fewer than 512 positive scores, so the 512th place is an exact 0-tie.
    inputs = case_inputs("b2_relu_ties")
    for b, n in enumerate(inputs["num_complete_blocks"].tolist()):
        j = torch.arange(n)
        keys = inputs["Kc_pages"][inputs["page_table"][b, j // 64].long(), j % 64].double()
        positive = int((torch.relu(keys @ inputs["Q_idx"][b].double().T).sum(1) > 0).sum())
        assert n > TOPK > positive


def test_robustness_check_rejects_a_near_tie() -> None:
    """Two blocks 1e-7 apart at the 512th place are not robust; 1.0 apart they are."""
    q = torch.zeros(4, 128)
    q[:, 0] = 1.0
    for gap, robust in ((2.0 ** -10, False), (1.0, True)):
        keys = torch.zeros(600, 128)
        keys[:, 0] = torch.arange(600, 0, -1).double() * 4.0   # distinct, well separated
        keys[512, 0] = keys[511, 0] - gap                        # 513th just below 512th
        assert qsa_index.selection_is_robust(q, keys) is robust


# ------------------------------------------------------------------ JSON artefacts
def test_json_files_validate_and_task_is_consistent() -> None:
    task = kit.checked_task_json(NAME, SOLUTION, FIDefinition, FISolution)
    assert task["tolerance"]["atol"] == 0 and task["tolerance"]["rtol"] == 0
    kit.assert_dev_held_out(NAME, task["dev"])
    assert task["baseline"]["solution"] == SOLUTION
    assert task["engine_baseline"] == "sglang_tilelang_fast_topk_qsa_index_h4"
    assert task["preferred"]["cpu"]["solution"] == SOLUTION
    kit.assert_family_data(NAME, "hf_eval.families.qsa_index")
    assert len({c["label"] for c in cases()}) == len(cases())
