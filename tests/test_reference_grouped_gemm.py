"""The FP8 x FP4 grouped GEMM: reference vs an independent FP64 formulation, the torch
solution vs the reference on the sample cases, and the sample generator.

The sample cases use the real constant axes, but only the experts a case routes rows to
are materialised (``sparse_weights``): they are all a correct kernel reads, and the full
weights are 2.3-4.5 GB. ``HF_EVAL_SLOW=1`` adds one full-size generation.
"""

from __future__ import annotations

import functools
import os
import types

import numpy as np
import pytest
import torch

from hf_eval.families import grouped_gemm as gen
from tests import kit
from tests.kit import REPO

DEFINITIONS = ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
               "grouped_gemm_fp8_fp4_e384_n5120_k2304_g32")
INPUT_DTYPES = {"Aq": torch.float8_e4m3fn, "Wq_packed": torch.int8, "scale_A": torch.int8,
                "scale_W": torch.int8, "expert_id": torch.int32}


definition = kit.definition_json
reference = kit.reference
cases = kit.cases


def solution(name: str) -> types.ModuleType:
    """The task's preferred CPU solution, imported as the harness imports it."""
    data = kit.solution(kit.task(name).preferred["cpu"].solution)
    assert data.definition == name
    return kit.solution_module(data.name)


# --- an independent FP64 formulation on tiny synthetic problems ------------------------

def fp4_by_bits(code: int) -> float:
    """E2M1 from its bit fields: sign bit 3, exponent bits 1-2 (bias 1), mantissa bit 0."""
    exponent, mantissa = (code >> 1) & 3, code & 1
    magnitude = mantissa * 0.5 if exponent == 0 else 2.0 ** (exponent - 1) * (1 + mantissa / 2)
    return -magnitude if code & 8 else magnitude


def dense_fp64(aq, wq, scale_a, scale_w, expert_id) -> np.ndarray:
    """Row by row in FP64 with scales applied per element (no block reshapes, no tables)."""
    m, k = aq.shape
    group = k // scale_a.shape[1]
    a = aq.to(torch.float64).numpy()
    sa = scale_a.view(torch.uint8).numpy().astype(np.int64)
    sw = scale_w.view(torch.uint8).numpy().astype(np.int64)
    packed = wq.view(torch.uint8).numpy()
    values = np.array([fp4_by_bits(c) for c in range(16)])
    out = np.zeros((m, wq.shape[1]))
    for row in range(m):
        e = int(expert_id[row])
        codes = np.empty((wq.shape[1], k), dtype=np.int64)
        codes[:, 0::2] = packed[e] & 0xF
        codes[:, 1::2] = packed[e] >> 4
        cols = np.arange(k) // group
        w = values[codes] * np.exp2(sw[e][:, cols] - 127.0)
        out[row] = w @ (a[row] * np.exp2(sa[row, cols] - 127.0))
    return out


def tiny_problem(seed: int, experts: int = 6, n: int = 8, k: int = 96, group: int = 32,
                 counts: tuple[int, ...] = (2, 0, 3, 0, 0, 1)):
    g = torch.Generator().manual_seed(seed)
    m = sum(counts)
    aq = (torch.randn(m, k, generator=g) * 40).to(torch.float8_e4m3fn)
    wq = torch.randint(-128, 128, (experts, n, k // 2), generator=g, dtype=torch.int8)
    scale_a = torch.randint(118, 124, (m, k // group), generator=g, dtype=torch.int8)
    scale_w = torch.randint(119, 123, (experts, n, k // group), generator=g, dtype=torch.int8)
    expert_id = torch.repeat_interleave(torch.arange(experts, dtype=torch.int32),
                                        torch.tensor(counts))
    return aq, wq, scale_a, scale_w, expert_id


@pytest.mark.parametrize("seed", [0, 1])
def test_reference_matches_dense_fp64(seed: int) -> None:
    inputs = tiny_problem(seed)
    out = reference(DEFINITIONS[0])(*inputs)
    assert out.dtype == torch.bfloat16 and out.shape == (6, 8)
    exact = dense_fp64(*inputs)
    assert np.abs(exact).mean() > 0.05  # not a vacuous comparison
    # FP32 accumulation then one BF16 rounding: within a BF16 half-ulp plus FP32 noise.
    assert np.allclose(out.double().numpy(), exact, rtol=2.0 ** -8, atol=1e-6)


def test_reference_never_reads_experts_without_rows() -> None:
    aq, wq, scale_a, scale_w, expert_id = tiny_problem(2)
    poisoned = scale_w.clone()
    poisoned[[1, 3, 4]] = -1  # UE8M0 NaN on the experts that receive no row
    for definition_name in DEFINITIONS:
        out = reference(definition_name)(aq, wq, scale_a, poisoned, expert_id)
        assert torch.isfinite(out.float()).all()
        out = solution(definition_name).run(aq, wq, scale_a, poisoned, expert_id)
        assert torch.isfinite(out.float()).all()


def test_reference_and_solution_leave_inputs_untouched() -> None:
    inputs = tiny_problem(3)
    before = [t.clone() for t in inputs]
    reference(DEFINITIONS[1])(*inputs)
    solution(DEFINITIONS[1]).run(*inputs)
    for b, a in zip(before, inputs):
        assert torch.equal(b.view(torch.uint8) if b.dtype == torch.float8_e4m3fn else b,
                           a.view(torch.uint8) if a.dtype == torch.float8_e4m3fn else a)


def test_solution_matches_dense_fp64_on_tiny_problem() -> None:
    inputs = tiny_problem(4, counts=(1, 4, 0, 0, 2, 0))
    out = solution(DEFINITIONS[0]).run(*inputs)
    assert out.dtype == torch.bfloat16 and out.shape == (7, 8)
    assert np.allclose(out.double().numpy(), dense_fp64(*inputs), rtol=2.0 ** -8, atol=1e-6)


# --- the sample cases -----------------------------------------------------------------

@functools.cache
def _sample_inputs(name: str, label: str) -> dict[str, torch.Tensor]:
    case = next(c for c in cases(name) if c["label"] == label)
    experts, n, k, block = gen.constant_shape(kit.definition(name))
    return gen.generate_shaped(name, case["params"], case["seed"], experts, n, k, block,
                               sparse_weights=True)


def sample_inputs(name: str, case: dict) -> dict[str, torch.Tensor]:
    """The case's inputs with only its routed experts materialised (cached per case)."""
    return _sample_inputs(name, case["label"])


@pytest.mark.parametrize("name", DEFINITIONS)
def test_solution_matches_reference_on_sample_cases(name: str) -> None:
    task = kit.task_json(name)
    tol = task["tolerance"]
    run_ref, module = reference(name), solution(name)
    spec = definition(name)
    for case in cases(name):
        inputs = sample_inputs(name, case)
        args = [inputs[key] for key in spec["inputs"]]
        expected = run_ref(*args).float()
        got = module.run(*args)
        assert got.dtype == torch.bfloat16 and got.shape == expected.shape
        bad = (got.float() - expected).abs() > tol["atol"] + tol["rtol"] * expected.abs()
        assert int(bad.sum()) == 0, f"{case['label']}: {int(bad.sum())} elements off"
        # Outputs are O(1), so the tolerance is meaningful (not a near-zero task).
        assert 0.3 < float(expected.std()) < 20, case["label"]


@pytest.mark.parametrize("name", DEFINITIONS)
def test_sample_cases_have_the_definition_shapes(name: str) -> None:
    spec = definition(name)
    const = {a: v["value"] for a, v in spec["axes"].items() if v["type"] == "const"}
    for case in cases(name):
        inputs = sample_inputs(name, case)
        assert set(inputs) == set(spec["inputs"])
        m = inputs["Aq"].shape[0]
        for key, tensor in inputs.items():
            shape = tuple(m if a == "M" else const[a] for a in spec["inputs"][key]["shape"])
            assert tensor.shape == shape and tensor.dtype == INPUT_DTYPES[key], key
        ids = inputs["expert_id"]
        assert bool((ids[1:] >= ids[:-1]).all())
        assert tensor_bytes(inputs["Aq"]) <= 1 << 20, "sample activations stay small"


def tensor_bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def test_case_structure_covers_the_edge_cases() -> None:
    seen = set()
    for name in DEFINITIONS:
        for case in cases(name):
            chosen, rows = gen.expert_rows(case["params"], (name, case["seed"]), 384)
            counts = np.zeros(384, dtype=np.int64)
            counts[chosen] = rows
            seen |= {"m1"} if counts.sum() == 1 else set()
            seen |= {"first"} if counts[0] else set()
            seen |= {"last"} if counts[383] else set()
            seen |= {"many"} if counts.max() >= 100 else set()
            seen |= {"empty"} if (counts == 0).any() else set()
    assert seen == {"m1", "first", "last", "many", "empty"}


def test_generator_is_deterministic_and_seed_sensitive() -> None:
    name = DEFINITIONS[1]
    for case in cases(name):
        one = gen.generate_shaped(name, case["params"], case["seed"], 384, 8, 64)
        two = gen.generate_shaped(name, case["params"], case["seed"], 384, 8, 64)
        for key in one:
            assert torch.equal(one[key].view(torch.uint8) if key == "Aq" else one[key],
                               two[key].view(torch.uint8) if key == "Aq" else two[key])
    other = gen.generate_shaped(name, {"rows": 12, "experts": 3}, 1, 384, 8, 64)
    again = gen.generate_shaped(name, {"rows": 12, "experts": 3}, 2, 384, 8, 64)
    assert not torch.equal(other["Aq"].view(torch.uint8), again["Aq"].view(torch.uint8))
    assert torch.equal(other["Wq_packed"], again["Wq_packed"])  # weights ignore the seed


@pytest.mark.parametrize("name", DEFINITIONS)
def test_expert_weights_are_deterministic_real_fp4(name: str) -> None:
    _, n, k, block = gen.constant_shape(kit.definition(name))
    for expert in (0, 383):
        packed, scales = gen.expert_weights(name, expert, n, k, block)
        again, scales_again = gen.expert_weights(name, expert, n, k, block)
        assert packed.shape == (n, k // 2) and scales.shape == (n, k // block)
        assert torch.equal(packed, again) and torch.equal(scales, scales_again)
    other, _ = gen.expert_weights(name, 1, n, k, block)
    assert not torch.equal(packed, other)
    codes = torch.cat([packed.view(torch.uint8) & 0xF, packed.view(torch.uint8) >> 4])
    freq = torch.bincount(codes.flatten().long(), minlength=16).double() / codes.numel()
    assert 0.04 < float(freq[0]) < 0.07 and float(freq[7]) < 0.01  # +0 and +6 rarer
    assert torch.allclose(freq[:8], freq[8:], atol=2e-3)  # sign-symmetric
    scale_bytes = torch.bincount(scales.view(torch.uint8).flatten().long(), minlength=256)
    assert set(scale_bytes.nonzero().flatten().tolist()) <= {119, 120, 121, 122}
    assert scale_bytes[120] > 0.4 * scales.numel() and scale_bytes[121] > 0.35 * scales.numel()


def test_task_files() -> None:
    for name in DEFINITIONS:
        task = kit.task_json(name)
        assert task["tolerance"]["atol"] == 0.005 and task["tolerance"]["rtol"] == 0.016
        assert task["engine_baseline"] is None
        kit.assert_dev_held_out(name, task["dev"])
        assert (REPO / "solutions/grouped_gemm" /
                f"{task['baseline']['solution']}.json").is_file()


@pytest.mark.skipif(os.environ.get("HF_EVAL_SLOW") != "1", reason="set HF_EVAL_SLOW=1")
def test_full_generation_matches_sparse() -> None:
    name = DEFINITIONS[1]
    case = cases(name)[0]
    full = {k: v() if callable(v) else v
            for k, v in gen.generate(kit.definition(name), case["params"], case["seed"]).items()}
    sparse = sample_inputs(name, case)
    assert full["Wq_packed"].shape == (384, 5120, 1152)
    for expert in set(sparse["expert_id"].tolist()):
        assert torch.equal(full["Wq_packed"][expert], sparse["Wq_packed"][expert])
        assert torch.equal(full["scale_W"][expert], sparse["scale_W"][expert])
    assert torch.equal(full["Aq"].view(torch.uint8), sparse["Aq"].view(torch.uint8))
