"""Value rules of the dense_attention family: each rule fires alone.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

import pytest

from hf_eval.families import dense_attention as gen
from hf_eval.families.dense_attention import check
from tests import kit

NAMES = ("noncausal_dense_attention_h32_d128", "noncausal_dense_attention_h32_d64")


@pytest.mark.parametrize("key", ["Q", "K", "V"])
def test_non_finite_input(key: str) -> None:
    inputs = gen.generate(kit.definition(NAMES[1]), {"B": 1, "Nq": 4, "Nk": 3}, 0)
    inputs[key][0, 2, 1, 0] = float("inf")
    problems = check(NAMES[1], inputs)
    assert len(problems) == 1
    assert problems[0].startswith(f"{key}:") and "finite" in problems[0]
    assert "(0, 2, 1, 0) = inf" in problems[0]
