"""The op families (hf_eval/families): the registry, the protocol's defaults, and what every
family promises of its sample (each case passes the family's own value rules)."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
import torch

from hf_eval.errors import DataError
from hf_eval.families import registry
from hf_eval.families.base import Family
from hf_eval.input_sets import PERMUTE_LIMIT, fresh_content, permute_floats
from hf_eval.samples.cases import CASES_DIR
from hf_eval.schema import Definition
from tests import kit
from tests.conftest import TOY_DEFINITION

DEFINITIONS = sorted(kit.dataset().definitions)
#: Families whose own tests check every sample case, drawing their large weights once
#: (gemm: a 100 MB weight per definition; grouped_gemm: 4.5 GB, of which only the routed
#: experts are drawn; moe_router: rejection-sampled tokens).
OWN_SAMPLE_TESTS = {"gemm": "tests/test_reference_gemm.py",
                    "grouped_gemm": "tests/test_rules_grouped_gemm.py",
                    "moe_router": "tests/test_reference_moe_router.py"}


def test_every_definition_has_its_family_registered_once():
    for name in DEFINITIONS:
        op_type = kit.definition(name).op_type
        family = registry.find(op_type)
        assert family is not None, f"{name}: no family {op_type!r} in the registry"
        assert family.module == f"hf_eval.families.{op_type}"
        assert importlib.import_module(family.module).FAMILY is family
    assert all(key == family.op_type for key, family in registry.FAMILIES.items())


def test_every_definition_has_sample_recipes_and_its_family_a_generator():
    for name in DEFINITIONS:
        assert (CASES_DIR / f"{name}.json").is_file(), name
        assert kit.cases(name), name


def test_a_definition_without_a_family_is_a_clear_error_where_one_is_needed():
    definition = Definition.model_validate(TOY_DEFINITION)
    assert registry.find("toy") is None
    with pytest.raises(DataError) as err:
        registry.family_of(definition, "sample generator")
    assert str(err.value) == (
        "definitions/toy/toy_linear_n8_k16.json: op_type: no op family 'toy' in "
        "hf_eval/families/registry.py, so there is no sample generator for this definition")


def test_the_second_input_set_is_the_familys_own_when_it_declares_one(monkeypatch):
    """Without a hook every family gets the floating inputs permuted; with one, its own."""
    definition = kit.definition("noncausal_dense_attention_h32_d64")
    inputs = [torch.arange(24, dtype=torch.float32).reshape(2, 12),
              torch.arange(6, dtype=torch.int32)]
    default = fresh_content(definition, inputs, torch.Generator().manual_seed(3))
    expected = permute_floats(inputs, torch.Generator().manual_seed(3))
    assert torch.equal(default[0], expected[0]) and not torch.equal(default[0], inputs[0])
    assert default[1] is inputs[1]  # integer inputs stay as they are

    calls = []

    def negate(values, generator):
        calls.append(generator)
        return [-v if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                for v in values]

    family = registry.FAMILIES["dense_attention"]
    monkeypatch.setitem(registry.FAMILIES, "dense_attention",
                        dataclasses.replace(family, fresh_content=negate))
    own = fresh_content(definition, inputs, torch.Generator().manual_seed(3))
    assert len(calls) == 1 and torch.equal(own[0], -inputs[0])


def test_many_fresh_sets_are_drawn_at_once_each_a_permutation_of_its_own():
    """A trial's sets come from one draw: each varied input a permutation of the
    workload's, no two sets alike; integers shared; an input too large for one draw of
    all sets is still varied, set by set."""
    from hf_eval.input_sets import BATCH_KEYS_LIMIT, permute_floats_many

    small = torch.arange(48, dtype=torch.float32).reshape(4, 12)
    ints = torch.arange(6, dtype=torch.int32)
    large = torch.arange(BATCH_KEYS_LIMIT // 8 + 1, dtype=torch.bfloat16)
    inputs = [small, ints, large, 0.5]
    sets = permute_floats_many(inputs, torch.Generator().manual_seed(7), 10)
    assert len(sets) == 10
    for fresh in sets:
        assert fresh[1] is ints and fresh[3] == 0.5
        assert fresh[0].shape == small.shape and fresh[0].dtype == small.dtype
        assert torch.equal(fresh[0].reshape(-1).sort().values, small.reshape(-1))
        assert fresh[2].shape == large.shape and not torch.equal(fresh[2], large)
        assert torch.equal(fresh[2].float().sort().values, large.float().sort().values)
    orders = {tuple(fresh[0].reshape(-1).tolist()) for fresh in sets}
    assert len(orders) == 10 and tuple(small.reshape(-1).tolist()) not in orders
    # one set is drawn as permute_floats draws it
    one = permute_floats_many(inputs, torch.Generator().manual_seed(7), 1)[0]
    assert torch.equal(one[0], permute_floats(inputs, torch.Generator().manual_seed(7))[0])


def _large_fp8(device: str) -> torch.Tensor:
    """An FP8 tensor above PERMUTE_LIMIT, so fresh content rolls it (the benchmark's large
    activations, e.g. grouped GEMM n5120 at m24576_t4096)."""
    rows = PERMUTE_LIMIT // 1024 + 1
    values = torch.randn(rows, 1024, generator=torch.Generator().manual_seed(0)) * 4
    return values.to(torch.float8_e4m3fn).to(device)


def _check_roll(device: str) -> None:
    value = _large_fp8(device)
    fresh = permute_floats([value], torch.Generator(device).manual_seed(5))[0]
    assert fresh.dtype == value.dtype and fresh.shape == value.shape
    old, new = value.reshape(-1).view(torch.uint8), fresh.reshape(-1).view(torch.uint8)
    # The rolls that could have put the first element where it is (random FP8 repeats).
    shifts = [int(i) for i in torch.nonzero(new == old[0]).flatten()
              if torch.equal(new[int(i):int(i) + 64], old[:64])]
    matches = [s for s in shifts if torch.equal(new, torch.roll(old, s))]
    assert len(matches) == 1 and matches[0] % value.shape[-1] != 0


def test_large_fp8_inputs_get_fresh_content_by_a_roll_of_whole_elements():
    _check_roll("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_large_fp8_inputs_get_fresh_content_on_cuda():
    """CUDA has no roll kernel for FP8: session 9's DEFINITION_ERROR at m24576_t4096."""
    _check_roll("cuda")


@pytest.mark.parametrize("name,label", [
    (name, case["label"]) for name in DEFINITIONS for case in kit.cases(name)
    if kit.definition(name).op_type not in OWN_SAMPLE_TESTS])
def test_every_sample_case_passes_its_familys_rules(name: str, label: str) -> None:
    family: Family = registry.find(kit.definition(name).op_type)
    assert family.check(name, kit.fresh_case_inputs(name, label)) == []
