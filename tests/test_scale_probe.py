"""The scale probe's inputs (``audit --scale-probe``): the published value for ``scale``,
every other ``*scale*`` scalar halved."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition, load_json, parse
from hf_eval.judge.input_sets import scale_probe
from tests.conftest import TOY_DEFINITION

REPO = Path(__file__).resolve().parent.parent
GDN = "definitions/gdn/gdn_decode_qk4_v8_d128_k_last.json"


def definition(path: str) -> Definition:
    return load_json(Definition, REPO / path)


def inputs_with(d: Definition, **scalars: object) -> list[object]:
    """Placeholders for every input, with the named scalars set."""
    return [scalars.get(name, torch.zeros(1)) for name in d.inputs]


def probed(d: Definition, probe: list[object] | None, name: str) -> object:
    assert probe is not None
    return probe[list(d.inputs).index(name)]


@pytest.mark.parametrize("zero", [0.0, 0, None])
def test_a_zero_scale_becomes_half_the_default(zero):
    """0 (or null) means 1/sqrt(head_size): the probe sends half of it, 0.5 / sqrt(128)."""
    d = definition(GDN)
    assert d.const_axes["head_size"] == 128
    value = probed(d, scale_probe(d, inputs_with(d, scale=zero)), "scale")
    assert value == pytest.approx(0.5 / math.sqrt(128), rel=1e-15)
    assert value != 0.05


def test_a_set_scale_is_halved():
    d = definition(GDN)
    assert probed(d, scale_probe(d, inputs_with(d, scale=0.08838834764831845)),
                  "scale") == 0.044194173824159224


def test_the_inputs_given_are_left_as_they_are():
    d = definition(GDN)
    inputs = inputs_with(d, scale=0.0)
    probe = scale_probe(d, inputs)
    assert inputs[list(d.inputs).index("scale")] == 0.0
    assert all(p is i for p, i, name in zip(probe, inputs, d.inputs) if name != "scale")


@pytest.mark.parametrize(("path", "name", "value"), [
    ("definitions/mixed_mla/mixed_mla_decode_deepseek41_h64_d512_k8128_k4512.json",
     "sm_scale", 0.041666666666666664),
    ("definitions/moe_router/moe_router_gemm_topk_deepseek41_d5120_e384_topk6.json",
     "routed_scale", 2.5)])
def test_other_scale_scalars_are_halved(path, name, value):
    d = definition(path)
    assert probed(d, scale_probe(d, inputs_with(d, **{name: value})), name) == value / 2


def test_nothing_to_vary_is_no_probe():
    """Scale tensors (block scales of quantised data) are data, not a runtime scale; a
    zero that is not the published ``scale`` has no half."""
    d = definition("definitions/grouped_gemm/grouped_gemm_fp8_fp4_e384_n4608_k5120_g32.json")
    assert scale_probe(d, inputs_with(d)) is None
    d = definition("definitions/mixed_mla/mixed_mla_decode_deepseek41_h64_d512_k8128_k4512.json")
    assert scale_probe(d, inputs_with(d, sm_scale=0.0)) is None


def test_a_zero_scale_without_head_size_is_a_data_error():
    d = parse(Definition, TOY_DEFINITION, "definitions/toy/toy_linear_n8_k16.json")
    assert "head_size" not in d.axes
    assert probed(d, scale_probe(d, inputs_with(d, scale=0.5)), "scale") == 0.25
    with pytest.raises(DataError, match="axes.head_size: the scale probe replaces a zero"):
        scale_probe(d, inputs_with(d, scale=0.0))
