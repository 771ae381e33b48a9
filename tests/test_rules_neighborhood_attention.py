"""Value rules of the neighborhood_attention family: each rule fires alone.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

import pytest

from hf_eval.families import neighborhood_attention as gen
from hf_eval.families.neighborhood_attention import check
from tests import kit

NAMES = tuple(gen.KERNELS)


@pytest.mark.parametrize("key", ["Q", "K", "V"])
def test_non_finite_input(key: str) -> None:
    name = "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5"
    inputs = gen.generate(kit.definition(name), {"B": 1, "T": 3, "Y": 5, "X": 6}, 0)
    inputs[key][0, 2, 1, 4, 3, 7] = float("nan")
    problems = check(name, inputs)
    assert len(problems) == 1
    assert problems[0].startswith(f"{key}:") and "finite" in problems[0]
    assert "(0, 2, 1, 4, 3, 7) = nan" in problems[0]
