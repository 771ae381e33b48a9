"""The dense_attention references, solutions, sample generator, cases and tasks.

The references are the truth, so they are checked against formulations that share no code
with them: FP64 SDPA with an explicit all-visible mask, a per-query FP64 loop, and the
permutation symmetries of non-causal attention (which a hidden mask or causality breaks).
The solutions and the sample data are then checked against the references under the
task's own tolerance, and the sample data is shown to be discriminating.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from flashinfer_bench.data import Definition

from hf_eval.families import dense_attention as gen
from hf_eval.families.common import normal, rng
from tests import kit

NAMES = ("noncausal_dense_attention_h32_d128", "noncausal_dense_attention_h32_d64")
HEAD_DIM = {"noncausal_dense_attention_h32_d128": 128, "noncausal_dense_attention_h32_d64": 64}


definition = kit.definition_json
reference = kit.reference
cases = kit.cases


def activations(seed: int, batch: int, length: int, dim: int, std: float = 1.0) -> torch.Tensor:
    """Normal bf16 ``[batch, length, 32, dim]`` test input (not the generator's)."""
    return normal(rng("test_dense", seed, length, dim), (batch, length, 32, dim), std=std)


def fp64_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """SDPA in FP64 on [B, N, H, D] tensors with an explicit all-visible mask."""
    visible = torch.ones(q.shape[1], k.shape[1], dtype=torch.bool)
    out = F.scaled_dot_product_attention(
        q.double().transpose(1, 2), k.double().transpose(1, 2), v.double().transpose(1, 2),
        attn_mask=visible, scale=q.shape[-1] ** -0.5)
    return out.transpose(1, 2)


# ----------------------------------------------------------------------- definitions
@pytest.mark.parametrize("name", NAMES)
def test_definition_loads_in_flashinfer_bench(name: str) -> None:
    parsed = Definition.model_validate(definition(name))
    assert parsed.name == name and parsed.op_type == "dense_attention"
    assert parsed.const_axes == {"H": 32, "D": HEAD_DIM[name]}
    assert list(parsed.inputs) == ["Q", "K", "V"]
    assert list(parsed.outputs) == ["output"]
    assert parsed.outputs["output"].dtype == "bfloat16"


# ------------------------------------------------------------------------ references
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("batch", "nq", "nk"), [(2, 11, 11), (1, 7, 19), (3, 16, 5)])
def test_reference_matches_fp64_sdpa(name: str, batch: int, nq: int, nk: int) -> None:
    d = HEAD_DIM[name]
    q = activations(1, batch, nq, d)
    k, v = activations(2, batch, nk, d), activations(3, batch, nk, d)
    kit.assert_bf16_rounding_of(reference(name)(q, k, v), fp64_sdpa(q, k, v))


@pytest.mark.parametrize("name", NAMES)
def test_reference_matches_per_query_fp64_loop(name: str) -> None:
    """Large logits (std about 4) so a wrong scale or a lost max-shift would show."""
    d = HEAD_DIM[name]
    q, k, v = activations(4, 1, 6, d, 2.0), activations(5, 1, 9, d, 2.0), activations(6, 1, 9, d)
    qd, kd, vd = q.double(), k.double(), v.double()
    exact = torch.empty_like(qd)
    for i in range(q.shape[1]):
        for h in range(32):
            logits = kd[0, :, h] @ qd[0, i, h] / d ** 0.5
            weights = torch.exp(logits - logits.max())
            exact[0, i, h] = (weights / weights.sum()) @ vd[0, :, h]
    kit.assert_bf16_rounding_of(reference(name)(q, k, v), exact)


@pytest.mark.parametrize("name", NAMES)
def test_reference_is_permutation_symmetric(name: str) -> None:
    """No mask: permuting queries permutes the output, permuting K/V together changes nothing."""
    d = HEAD_DIM[name]
    q, k, v = activations(7, 2, 10, d), activations(8, 2, 10, d), activations(9, 2, 10, d)
    run = reference(name)
    base = run(q, k, v).double()
    perm = torch.tensor([3, 7, 0, 9, 1, 8, 2, 6, 4, 5])
    torch.testing.assert_close(run(q[:, perm], k, v).double(), base[:, perm], rtol=2 ** -7,
                               atol=1e-5)
    torch.testing.assert_close(run(q, k[:, perm], v[:, perm]).double(), base, rtol=2 ** -7,
                               atol=1e-5)


test_reference_does_not_mutate_inputs = kit.keeps_inputs_test(NAMES)


# ------------------------------------------------------------------------- solutions
@kit.over_solution_cases(NAMES, kit.DEVICES)
def test_solution_matches_reference_on_samples(name: str, solution: str, label: str,
                                               device: str) -> None:
    _, args, before, ref, out = kit.run_solution_on_case(name, solution, label, device,
                                                         ("Q", "K", "V"))
    tol = kit.task_json(name)["tolerance"]
    assert tol["required_matched_ratio"] == 0.9999
    # The 99.99 % allowance exists for rare fused-kernel misses on huge outputs; the torch
    # solution must match every element of these small samples.
    assert kit.matched_ratio(out, ref, tol) == 1.0
    kit.assert_unchanged(args, before)


@pytest.mark.parametrize("name", NAMES)
def test_samples_reject_a_kernel_with_the_wrong_scale_or_a_lost_key(name: str) -> None:
    """The sample data is discriminating: plausible wrong kernels fail the tolerance."""
    tol = kit.task_json(name)["tolerance"]
    # Some cases cannot tell these kernels apart by construction, and every other case must:
    # with one key the softmax is 1 whatever the scale and there is no key to lose; the
    # deliberately flat case (qk_std 0.3, a nearly uniform softmax) hardly feels a 5 % scale.
    checked = [c for c in cases(name) if c["params"]["Nk"] > 1]
    assert len(checked) >= 8
    for case in checked:
        inputs = kit.fresh_case_inputs(name, case["label"])
        q, k, v = (inputs[key].transpose(1, 2) for key in ("Q", "K", "V"))
        ref = reference(name)(inputs["Q"], inputs["K"], inputs["V"])
        d = q.shape[-1]
        lost_key = F.scaled_dot_product_attention(q, k[:, :, 1:], v[:, :, 1:])
        assert kit.matched_ratio(lost_key.transpose(1, 2), ref, tol) < 0.99, case["label"]
        if case["params"].get("qk_std", 1.0) >= 1.0:
            wrong_scale = F.scaled_dot_product_attention(q, k, v, scale=1.05 * d ** -0.5)
            assert kit.matched_ratio(wrong_scale.transpose(1, 2), ref, tol) < 0.9, case["label"]


# ------------------------------------------------------------------- generator, cases
@pytest.mark.parametrize("name", NAMES)
def test_generator_is_deterministic_with_the_definition_shapes(name: str) -> None:
    spec = definition(name)
    for case in cases(name):
        first, second = kit.generated_twice(gen.generate, name, case)
        axes = {**case["params"], "H": 32, "D": HEAD_DIM[name]}
        for key, tensor in first.items():
            want = spec["inputs"][key]
            assert tuple(tensor.shape) == tuple(axes[a] for a in want["shape"]), key
            assert tensor.dtype == torch.bfloat16
            assert tensor.is_contiguous()
            assert tensor.view(torch.int8).numpy().tobytes() == \
                second[key].view(torch.int8).numpy().tobytes(), key
            assert bool(torch.isfinite(tensor).all())
            assert 0.3 < tensor.float().std().item() < 8.0, key  # model-like magnitude
    labels = [c["label"] for c in cases(name)]
    assert len(labels) == len(set(labels)) >= 4


@pytest.mark.parametrize("name", NAMES)
def test_cases_cover_the_required_edge_cases(name: str) -> None:
    params = [c["params"] for c in cases(name)]
    assert any(p["Nq"] == p["Nk"] for p in params)  # self attention
    assert any(p["Nq"] != p["Nk"] for p in params)  # cross attention
    assert any(p["B"] > 1 for p in params)
    assert any(p.get("qk_std", 1.0) >= 2.0 for p in params)  # peaky softmax


@pytest.mark.parametrize("name", NAMES)
def test_peaky_case_is_peaky(name: str) -> None:
    """qk_std 2.5 gives rows whose largest probability dominates (mean max prob > 0.5).
    (With one key the largest probability is 1 whatever the logits: not a test of qk_std.)"""
    for case in (c for c in cases(name) if c["params"]["Nk"] > 1):
        inputs = kit.fresh_case_inputs(name, case["label"])
        logits = torch.einsum("bihd,bjhd->bhij", inputs["Q"].float(), inputs["K"].float())
        top = torch.softmax(logits / HEAD_DIM[name] ** 0.5, dim=-1).amax(-1).mean().item()
        assert (top > 0.5) == (case["params"].get("qk_std", 1.0) >= 2.0), case["label"]


# ------------------------------------------------------------------------------ tasks
@pytest.mark.parametrize("name", NAMES)
def test_task_config(name: str) -> None:
    config = kit.checked_task_config(name, f"workloads/dense_attention/{name}.jsonl",
                                     {**kit.LTX_ALLCLOSE, "required_matched_ratio": 0.9999})
    names = {s["name"] for s in kit.solutions_json_for(name)}
    # The engine's call is SDPA with cuDNN allowed first (docs/interface-audit); the baseline
    # is the same call under torch's default backend choice, which also runs on the CPU.
    engine = name.replace("noncausal_dense_attention", "cudnn_sdpa_dense")
    assert config["engine_baseline"] == engine
    assert config["engine_baseline"] in names
    assert config["baseline"] == {"solution": name.replace("noncausal_dense_attention",
                                                           "torch_sdpa_dense"), "timed": "call"}
    assert config["preferred"]["cpu"]["solution"] in names
