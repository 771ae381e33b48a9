"""The block_causal_attention references, solutions, sample generator, cases and tasks.

The references are the truth, so they are checked against formulations that share no code
with them: FP64 SDPA with a mask built by plain Python loops, a per-query FP64 loop, the
dense-attention definition's reference, and SDPA's own causal mode. The solutions and the
sample data are then checked against the references under the task's own tolerance, and
the sample data is shown to be discriminating (a kernel with the wrong mask or without the
prefix fails it).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from flashinfer_bench.data import Definition

from hf_eval.families import block_causal_attention as gen
from hf_eval.families.common import normal, rng
from tests import kit

PREFIX = "prefix_cached_block_causal_h32_d128"
PREFIX0 = "prefix_cached_block_causal_h32_d128_prefix0"
NAMES = (PREFIX, PREFIX0)
SCALE = 128 ** -0.5


definition = kit.definition_json
reference = kit.reference
cases = kit.cases
solutions = kit.solutions_json_for
task = kit.task_json


def activations(seed: int, batch: int, length: int) -> torch.Tensor:
    """Unit-normal bf16 ``[batch, length, 32, 128]`` test input (not the generator's)."""
    return normal(rng("test_block_causal", seed, length), (batch, length, 32, 128))


def fp64_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    """SDPA in FP64 on [B, N, H, D] tensors; the independent truth for these tests."""
    out = F.scaled_dot_product_attention(
        q.double().transpose(1, 2), k.double().transpose(1, 2), v.double().transpose(1, 2),
        attn_mask=mask, is_causal=causal, scale=SCALE)
    return out.transpose(1, 2)


def loop_mask(image_ids: list[int]) -> torch.Tensor:
    """The contract's visibility rule, pair by pair in plain Python."""
    n = len(image_ids)
    return torch.tensor([[j <= i or (image_ids[i] >= 0 and image_ids[i] == image_ids[j])
                          for j in range(n)] for i in range(n)])


def failing_fraction(out: torch.Tensor, ref: torch.Tensor, tol: dict[str, Any]) -> float:
    """Fraction of elements outside |a - r| <= atol + rtol |r| (the task's comparison)."""
    return 1 - kit.matched_ratio(out, ref, tol)


def layout(segments: list[tuple[str, int]]) -> list[int]:
    """Image IDs 0, 1, ... per image run, -1 for text (written independently of gen)."""
    ids: list[int] = []
    image = 0
    for kind, length in segments:
        ids += [image if kind == "image" else -1] * length
        image += kind == "image"
    return ids


# ----------------------------------------------------------------------- definitions
@pytest.mark.parametrize("name", NAMES)
def test_definition_loads_in_flashinfer_bench(name: str) -> None:
    data = definition(name)
    parsed = Definition.model_validate(data)
    assert parsed.name == name and parsed.op_type == "block_causal_attention"
    assert parsed.const_axes == {"H": 32, "D": 128}
    assert list(parsed.outputs) == ["output"]
    assert parsed.outputs["output"].dtype == "bfloat16"


def test_published_input_order() -> None:
    assert list(definition(PREFIX)["inputs"]) == [
        "Q", "K_prefix", "V_prefix", "K_current", "V_current"]
    assert list(definition(PREFIX0)["inputs"]) == ["Q", "K_current", "V_current", "image_ids"]


# ------------------------------------------------------------------------ references
def test_prefix_reference_matches_fp64_sdpa_with_explicit_mask() -> None:
    q, kp, vp = activations(1, 2, 13), activations(2, 2, 7), activations(3, 2, 7)
    kc, vc = activations(4, 2, 13), activations(5, 2, 13)
    visible = torch.ones(13, 7 + 13, dtype=torch.bool)  # full visibility
    exact = fp64_sdpa(q, torch.cat([kp, kc], 1), torch.cat([vp, vc], 1), mask=visible)
    kit.assert_bf16_rounding_of(reference(PREFIX)(q, kp, vp, kc, vc), exact)


def test_prefix_reference_is_dense_attention_over_concatenated_kv() -> None:
    """Prefix first, then current: the key order matters only through the pairing with V."""
    dense = kit.reference("noncausal_dense_attention_h32_d128")
    q, kp, vp = activations(6, 1, 9), activations(7, 1, 20), activations(8, 1, 20)
    kc, vc = activations(9, 1, 9), activations(10, 1, 9)
    got = reference(PREFIX)(q, kp, vp, kc, vc)
    want = dense(q, torch.cat([kp, kc], 1), torch.cat([vp, vc], 1))
    torch.testing.assert_close(got.double(), want.double(), rtol=2 ** -7, atol=1e-5)
    swapped = reference(PREFIX)(q, kp, vc, kc, vp)  # values paired with the wrong keys
    assert not torch.allclose(swapped.double(), want.double(), rtol=0.016, atol=0.005)


def test_prefix0_reference_matches_fp64_sdpa_with_loop_mask() -> None:
    ids = layout([("text", 3), ("image", 5), ("text", 2), ("image", 4), ("image", 3),
                  ("text", 2)])
    n = len(ids)
    q, k, v = activations(11, 2, n), activations(12, 2, n), activations(13, 2, n)
    exact = fp64_sdpa(q, k, v, mask=loop_mask(ids))
    got = reference(PREFIX0)(q, k, v, torch.tensor(ids, dtype=torch.int32))
    kit.assert_bf16_rounding_of(got, exact)


def test_prefix0_reference_matches_per_query_fp64_loop() -> None:
    ids = layout([("image", 4), ("text", 3), ("image", 1), ("image", 5), ("text", 2)])
    n = len(ids)
    q, k, v = activations(14, 1, n), activations(15, 1, n), activations(16, 1, n)
    qd, kd, vd = q.double(), k.double(), v.double()
    exact = torch.empty_like(qd)
    for i in range(n):
        keys = [j for j in range(n) if j <= i or (ids[i] >= 0 and ids[j] == ids[i])]
        logits = torch.einsum("bhd,bjhd->bhj", qd[:, i], kd[:, keys]) * SCALE
        weights = torch.exp(logits - logits.amax(-1, keepdim=True))
        weights = weights / weights.sum(-1, keepdim=True)
        exact[:, i] = torch.einsum("bhj,bjhd->bhd", weights, vd[:, keys])
    got = reference(PREFIX0)(q, k, v, torch.tensor(ids, dtype=torch.int32))
    kit.assert_bf16_rounding_of(got, exact)


def test_prefix0_without_images_is_causal_attention() -> None:
    q, k, v = activations(17, 2, 21), activations(18, 2, 21), activations(19, 2, 21)
    got = reference(PREFIX0)(q, k, v, torch.full((21,), -1, dtype=torch.int32))
    kit.assert_bf16_rounding_of(got, fp64_sdpa(q, k, v, causal=True))


def test_prefix0_one_image_over_everything_is_full_attention() -> None:
    q, k, v = activations(20, 1, 17), activations(21, 1, 17), activations(22, 1, 17)
    got = reference(PREFIX0)(q, k, v, torch.full((17,), 5, dtype=torch.int32))
    kit.assert_bf16_rounding_of(got, fp64_sdpa(q, k, v))


test_reference_does_not_mutate_inputs = kit.keeps_inputs_test(NAMES)


# ------------------------------------------------------------------------- solutions
@kit.over_solution_cases(NAMES, kit.DEVICES)
def test_solution_matches_reference_on_samples(name: str, solution: str, label: str,
                                               device: str) -> None:
    module, args, before, ref, out = kit.run_solution_on_case(name, solution, label, device,
                                                              definition(name)["inputs"])
    tol = task(name)["tolerance"]
    assert tol["required_matched_ratio"] is None  # every element must match
    assert failing_fraction(out, ref, tol) == 0.0
    if "prepare" in module:
        launch = module["prepare"](*args)
        first, second = launch(), launch()
        assert failing_fraction(first, ref, tol) == 0.0
        assert first.data_ptr() != second.data_ptr()  # fresh output per launch
    kit.assert_unchanged(args, before)


def test_samples_reject_a_kernel_with_the_wrong_mask_or_no_prefix() -> None:
    """The sample data is discriminating: plausible wrong kernels fail the tolerance."""
    tol = task(PREFIX0)["tolerance"]
    checked = 0
    for case in cases(PREFIX0):
        inputs = kit.fresh_case_inputs(PREFIX0, case["label"])
        ids = inputs["image_ids"]
        # Causal attention is the reference when no image block has two tokens (all text,
        # or one-token images): such a case cannot tell the masks apart.
        if not any(int((ids == i).sum()) > 1 for i in ids[ids >= 0].unique()):
            continue
        checked += 1
        q, k, v = inputs["Q"], inputs["K_current"], inputs["V_current"]
        ref = reference(PREFIX0)(q, k, v, inputs["image_ids"])
        causal_only = fp64_sdpa(q, k, v, causal=True)
        assert failing_fraction(causal_only, ref, tol) > 0.1, case["label"]
    assert checked >= 8
    for case in cases(PREFIX):
        inputs = kit.fresh_case_inputs(PREFIX, case["label"])
        ref = reference(PREFIX)(*(inputs[key] for key in definition(PREFIX)["inputs"]))
        no_prefix = fp64_sdpa(inputs["Q"], inputs["K_current"], inputs["V_current"])
        assert failing_fraction(no_prefix, ref, tol) > 0.1, case["label"]


# ------------------------------------------------------------------- generator, cases
@pytest.mark.parametrize("name", NAMES)
def test_generator_is_deterministic_with_the_definition_shapes(name: str) -> None:
    spec = definition(name)
    for case in cases(name):
        first, second = kit.generated_twice(gen.generate, name, case)
        params = case["params"]
        nq = (params["Nq"] if name == PREFIX
              else sum(length for _, length in params["segments"]))
        axes = {"B": params["B"], "Nq": nq, "Np": params.get("Np"), "H": 32, "D": 128}
        for key, tensor in first.items():
            want = spec["inputs"][key]
            assert tuple(tensor.shape) == tuple(axes[a] for a in want["shape"]), key
            assert str(tensor.dtype) == f"torch.{want['dtype']}", key
            assert tensor.is_contiguous()
            assert tensor.view(torch.int8).numpy().tobytes() == \
                second[key].view(torch.int8).numpy().tobytes(), key
            if tensor.is_floating_point():
                assert bool(torch.isfinite(tensor).all())
                assert 0.3 < tensor.float().std().item() < 5.0, key  # model-like magnitude
    labels = [c["label"] for c in cases(name)]
    assert len(labels) == len(set(labels)) >= 4
    seeds = [c["seed"] for c in cases(name)]
    assert len(seeds) == len(set(seeds))


def test_different_seeds_give_different_data() -> None:
    params = {"B": 1, "Nq": 4, "Np": 3}
    prefix = kit.definition(PREFIX)
    first, second = gen.generate(prefix, params, 1), gen.generate(prefix, params, 2)
    assert not torch.equal(first["Q"], second["Q"])


def test_prefix0_layout_from_segments() -> None:
    ids = gen.image_ids_from_segments([["text", 2], ["image", 3], ["image", 1], ["text", 1]])
    assert ids.dtype == torch.int32
    assert ids.tolist() == layout([("text", 2), ("image", 3), ("image", 1), ("text", 1)])
    assert ids.tolist() == [-1, -1, 0, 0, 0, 1, -1]


def test_cases_cover_the_required_edge_cases() -> None:
    prefix = [c["params"] for c in cases(PREFIX)]
    assert any(p["B"] > 1 for p in prefix)
    assert any(p["Nq"] > p["Np"] for p in prefix) and any(p["Nq"] < p["Np"] for p in prefix)
    layouts = [(c["params"]["B"], gen.image_ids_from_segments(c["params"]["segments"]).tolist())
               for c in cases(PREFIX0)]
    assert any(b > 1 for b, _ in layouts)
    assert any(all(i == -1 for i in ids) for _, ids in layouts)  # pure causal
    assert any(len({i for i in ids if i >= 0}) == 1 and -1 in ids for _, ids in layouts)
    several = [ids for _, ids in layouts if len({i for i in ids if i >= 0}) >= 2]
    assert any(ids[0] == -1 and ids[-1] == -1 and -1 in ids[ids.index(0):ids.index(1)]
               for ids in several)  # text before, between and after the images


# ------------------------------------------------------------------------------ tasks
@pytest.mark.parametrize("name", NAMES)
def test_task_config(name: str) -> None:
    config = kit.checked_task_config(name, f"workloads/block_causal_attention/{name}.jsonl",
                                     kit.LTX_ALLCLOSE)
    names = {s["name"]: s for s in solutions(name)}
    assert config["engine_baseline"] in names
    assert config["baseline"]["solution"] == config["engine_baseline"]
    has_prepare = "def prepare" in names[config["baseline"]["solution"]]["sources"][0]["content"]
    assert config["baseline"]["timed"] == ("launch" if has_prepare else "call")
    assert config["preferred"]["cpu"]["solution"] in names
