"""Value rules of the grouped GEMM family: each rule violated once, and the samples pass.

The samples are checked at their real constant axes with only the routed experts
materialised (the others are zero bytes, which are valid); see test_reference_grouped_gemm.
"""

from __future__ import annotations

import pytest
import torch

from hf_eval.families import grouped_gemm as gen
from hf_eval.families import grouped_gemm as rules
from tests import kit

DEFINITIONS = ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
               "grouped_gemm_fp8_fp4_e384_n5120_k2304_g32")
NAME = DEFINITIONS[1]


def valid_inputs() -> dict[str, torch.Tensor]:
    """A small valid workload (tiny N and K; E = 384 so expert 383 is in range)."""
    return gen.generate_shaped(NAME, {"groups": [[0, 2], [5, 3], [383, 1]]}, 7, 384, 4, 64)


def with_change(key: str, index: tuple, value: int | float) -> dict[str, torch.Tensor]:
    inputs = valid_inputs()
    tensor = inputs[key].clone()
    if tensor.dtype == torch.float8_e4m3fn:
        tensor.view(torch.uint8)[index] = int(value)
    else:
        tensor[index] = value
    inputs[key] = tensor
    return inputs


def test_valid_workload_passes() -> None:
    assert rules.check(NAME, valid_inputs()) == []


@pytest.mark.parametrize("key,index,value,fragment", [
    ("expert_id", (5,), 384, "expert_id: every entry must be an expert in [0, 384)"),
    ("expert_id", (0,), -1, "expert_id: every entry must be an expert in [0, 384)"),
    ("expert_id", (3,), 1, "expert_id: must be non-decreasing"),
    ("scale_A", (2, 1), -1, "scale_A: UE8M0 byte 255 (NaN) is invalid"),
    ("scale_W", (383, 3, 0), -1, "scale_W: UE8M0 byte 255 (NaN) is invalid"),
    ("Aq", (4, 10), 0x7F, "Aq: FP8 E4M3 NaN codes"),
    ("Aq", (0, 0), 0xFF, "Aq: FP8 E4M3 NaN codes"),
])
def test_each_rule_rejects_its_violation(key: str, index: tuple, value: int,
                                         fragment: str) -> None:
    problems = rules.check(NAME, with_change(key, index, value))
    assert len(problems) == 1, problems
    assert problems[0].startswith(fragment), problems
    where = f"row {index[0]}:" if "non-decreasing" in fragment else str(index)
    assert where in problems[0], problems


def test_unsorted_rows_report_the_first_decrease() -> None:
    inputs = valid_inputs()
    inputs["expert_id"] = torch.tensor([5, 5, 0, 0, 383, 5], dtype=torch.int32)
    (problem,) = rules.check(NAME, inputs)
    assert "2 decreases, first at row 2: 5 then 0" in problem


def test_every_rule_is_reported_together() -> None:
    inputs = with_change("scale_A", (0, 0), -1)
    inputs["scale_W"] = inputs["scale_W"].clone()
    inputs["scale_W"][1, 1, 1] = -1
    inputs["expert_id"] = torch.tensor([0, 400, 5, 5, 5, 3], dtype=torch.int32)
    assert len(rules.check(NAME, inputs)) == 4


@pytest.mark.parametrize("name", DEFINITIONS)
def test_every_sample_case_passes(name: str) -> None:
    experts, n, k, block = gen.constant_shape(kit.definition(name))
    for case in kit.cases(name):
        inputs = gen.generate_shaped(name, case["params"], case["seed"], experts, n, k, block,
                                     sparse_weights=True)
        assert rules.check(name, inputs) == [], case["label"]
