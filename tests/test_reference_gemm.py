"""The gemm references, solutions, sample generator, cases, tasks and value rules.

The reference (FP32 matmul rounded to BF16) is checked against an FP64 sum of products
that shares no code with it; the engine-call solution is checked against the reference
on every sample case under the task's tolerance; the sample data is shown to reject
plausible bugs; the generator is deterministic and shares the weight across cases. The
gemm value rule (finite inputs) is tested here too, since it is the family's only rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
from flashinfer_bench.data import Definition, Solution

from hf_eval.families import gemm as gen
from hf_eval.families.common import normal, rng
from hf_eval.families.gemm import check
from tests import kit

SHAPES = {"dense_gemm_bf16_nt_n12288_k4096": (12288, 4096),
          "dense_gemm_bf16_nt_n4096_k12288": (4096, 12288),
          "dense_gemm_bf16_nt_n4096_k4096": (4096, 4096)}
NAMES = tuple(SHAPES)


definition = kit.definition_json
reference = kit.reference
cases = kit.cases
task = kit.task_json


def solution_name(name: str) -> str:
    n, k = SHAPES[name]
    return f"torch_linear_bf16_n{n}_k{k}"


def solution_json(name: str) -> dict[str, Any]:
    return kit.solution_json(solution_name(name))


def solution(name: str) -> Callable[..., torch.Tensor]:
    return kit.solution_run(solution_name(name))


def within_task_tolerance(out: torch.Tensor, ref: torch.Tensor, name: str) -> bool:
    """The task's allclose rule |a - r| <= atol + rtol |r| on every element."""
    tol = task(name)["tolerance"]
    assert tol["comparison"] == "allclose" and tol["required_matched_ratio"] is None
    assert out.shape == ref.shape and out.dtype == ref.dtype == torch.bfloat16
    err = (out.double() - ref.double()).abs()
    return bool((err <= tol["atol"] + tol["rtol"] * ref.double().abs()).all())


def fp64_products(a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """C[m, n] = sum_k A[m, k] W[n, k] as an explicit FP64 sum of products."""
    return (a.double()[:, None, :] * w.double()[None, :, :]).sum(dim=-1)


def assert_bf16_of(out: torch.Tensor, exact: torch.Tensor) -> None:
    """``out`` is BF16 and within one BF16 rounding (plus FP32 accumulation noise)."""
    assert out.dtype == torch.bfloat16 and out.shape == exact.shape
    err = (out.double() - exact).abs()
    assert bool((err <= 2.0 ** -8 * exact.abs() + 1e-4).all()), float(err.max())


def raw(t: torch.Tensor) -> bytes:
    return t.view(torch.int16).numpy().tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_files_load_and_task_config(name: str) -> None:
    d = Definition.model_validate(definition(name))
    n, k = SHAPES[name]
    assert d.op_type == "gemm" and list(d.inputs) == ["A", "W"] and list(d.outputs) == ["C"]
    assert d.axes["N"].value == n and d.axes["K"].value == k
    s = Solution.model_validate(solution_json(name))
    assert s.definition == name
    t = task(name)
    assert t["tolerance"] == {"atol": 0.005, "rtol": 0.016, "required_matched_ratio": None,
                              "comparison": "allclose"}
    kit.assert_dev_held_out(name, t["dev"])
    assert t["baseline"] == {"solution": solution_name(name), "timed": "call"}
    assert t["engine_baseline"] == solution_name(name)
    assert t["workloads"] == [f"workloads/gemm/{name}.jsonl"]
    ms = [c["params"]["M"] for c in cases(name)]
    # Inside the published domain (the published rows keep M >= 4096): its smallest M,
    # its largest named M, and Ms that leave a partial row tile.
    assert len(ms) >= 4 and min(ms) == 4096 and max(ms) == 24576
    assert any(m % 2 for m in ms) and 4097 in ms


def test_reference_matches_fp64_sum_of_products() -> None:
    """Small shapes (the reference is shape-agnostic), then a real-K slice."""
    run = reference(NAMES[0])
    a = normal(rng("test_gemm", 1), (5, 96))
    w = normal(rng("test_gemm", 2), (7, 96), std=0.3)
    assert_bf16_of(run(a, w), fp64_products(a, w))
    a = normal(rng("test_gemm", 3), (3, 4096))
    w = normal(rng("test_gemm", 4), (64, 4096), std=4096 ** -0.5)
    a_before, w_before = a.clone(), w.clone()
    assert_bf16_of(run(a, w), fp64_products(a, w))
    assert torch.equal(a, a_before) and torch.equal(w, w_before)


#: Rows of each sample case run through the reference and the solution here: the first and
#: the last tile's (rows are independent in a GEMM, so a slice is a smaller GEMM with the
#: same rows; the audit runs every row).
EDGE_ROWS = 64


@pytest.mark.parametrize("name", NAMES)
def test_samples_solution_rules_and_discrimination(name: str) -> None:
    """Per case: generator shapes, rule check, solution vs reference on the first and last
    rows, O(1) outputs."""
    n, k = SHAPES[name]
    ref, sol = reference(name), solution(name)
    first_weight = None
    for case in cases(name):
        inputs = gen.generate(kit.definition(name), case["params"], case["seed"])
        full, w = inputs["A"], inputs["W"]
        assert list(inputs) == ["A", "W"]
        assert full.shape == (case["params"]["M"], k) and w.shape == (n, k)
        assert full.dtype == w.dtype == torch.bfloat16
        if first_weight is None:
            assert check(name, inputs) == []
            first_weight = w
        else:  # one layer weight shared by every case (so checking A suffices)
            assert torch.equal(w, first_weight)
            assert check(name, {"A": full}) == []
        a = torch.cat((full[:EDGE_ROWS], full[-EDGE_ROWS:]))
        del inputs, full
        expected = ref(a, w)
        out = sol(a, w)
        assert within_task_tolerance(out, expected, name)
        assert 0.5 < float(expected.float().std()) < 2.0  # outputs are O(1)
        if case["params"]["M"] == 4097:  # plausible bugs miss the tolerance on the sample
            assert not within_task_tolerance(
                ref(a[:, : k - 64], w[:, : k - 64]), expected, name)  # a lost K tile
            assert not within_task_tolerance(
                bf16_accumulated(a, w), expected, name)  # BF16 running sum
            assert not within_task_tolerance(out.roll(1, dims=0), expected, name)


def bf16_accumulated(a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A kernel that keeps its running sum in BF16 (64 K-slices, each summed in FP32)."""
    acc = torch.zeros(a.shape[0], w.shape[0], dtype=torch.bfloat16)
    step = a.shape[1] // 64
    for start in range(0, a.shape[1], step):
        part = a[:, start:start + step].float() @ w[:, start:start + step].float().t()
        acc = (acc.float() + part).to(torch.bfloat16)
    return acc


@pytest.mark.parametrize("name", NAMES)
def test_generator_is_deterministic(name: str) -> None:
    case = cases(name)[0]
    first = gen.generate(kit.definition(name), case["params"], case["seed"])
    second = gen.generate(kit.definition(name), case["params"], case["seed"])
    assert raw(first["A"]) == raw(second["A"]) and raw(first["W"]) == raw(second["W"])
    other = gen.generate(kit.definition(name), case["params"], case["seed"] + 1)
    assert raw(other["A"]) != raw(first["A"])
    assert abs(float(first["W"].float().std()) - 1 / math.sqrt(SHAPES[name][1])) < 1e-3


@pytest.mark.parametrize("input_name", ["A", "W"])
def test_rule_rejects_non_finite_inputs(input_name: str) -> None:
    inputs = {"A": normal(rng("test_gemm", 5), (2, 16)),
              "W": normal(rng("test_gemm", 6), (8, 16))}
    assert check("dense_gemm_bf16_nt_n4096_k4096", inputs) == []
    inputs[input_name][1, 3] = float("inf")
    problems = check("dense_gemm_bf16_nt_n4096_k4096", inputs)
    assert len(problems) == 1
    assert problems[0].startswith(f"{input_name}:") and "finite" in problems[0]
