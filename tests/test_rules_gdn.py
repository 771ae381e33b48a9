"""The gdn value rules: each rule violated once is reported.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from hf_eval.families import gdn as gen
from hf_eval.families.gdn import check
from tests import kit

DECODE = "gdn_decode_qk4_v8_d128_k_last"
PREFILL = "gdn_prefill_qk4_v8_d128_k_last"


def prefill_inputs() -> dict[str, Any]:
    """A valid prefill workload with lengths [3, 0, 2] (built here, not by the generator)."""
    return gen.generate(kit.definition(PREFILL), {"seq_lens": [3, 0, 2], "scale": 0.0}, seed=1)


@pytest.mark.parametrize("cu,fragment", [
    ([1, 3, 3, 5], "must start at 0"),
    ([0, 3, 2, 5], "must be non-decreasing"),
    ([0, 3, 3, 4], "must end at total_seq_len = 5"),
])
def test_cu_seqlens_rules(cu: list[int], fragment: str) -> None:
    inputs = prefill_inputs()
    assert check(PREFILL, inputs) == []
    inputs["cu_seqlens"] = torch.tensor(cu, dtype=torch.int64)
    problems = check(PREFILL, inputs)
    assert len(problems) == 1
    assert problems[0].startswith("cu_seqlens:") and fragment in problems[0]


@pytest.mark.parametrize("scale", [-0.1, float("nan"), float("inf")])
def test_scale_must_be_finite_and_non_negative(scale: float) -> None:
    inputs = prefill_inputs()
    inputs["scale"] = scale
    problems = check(PREFILL, inputs)
    assert len(problems) == 1 and problems[0].startswith("scale:")


@pytest.mark.parametrize("name", ["q", "state", "A_log", "b"])
def test_float_inputs_must_be_finite(name: str) -> None:
    inputs = gen.generate(kit.definition(DECODE), {"batch_size": 1, "scale": 0.0}, seed=2)
    assert check(DECODE, inputs) == []
    bad = inputs[name].clone()
    bad.view(-1)[-1] = float("nan")
    inputs[name] = bad
    problems = check(DECODE, inputs)
    assert len(problems) == 1
    assert problems[0].startswith(f"{name}:") and "finite" in problems[0]
