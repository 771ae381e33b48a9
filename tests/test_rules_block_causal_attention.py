"""Value rules of the block_causal_attention family: each rule fires alone.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

import pytest
import torch

from hf_eval.families import block_causal_attention as gen
from hf_eval.families.block_causal_attention import check
from tests import kit

PREFIX = "prefix_cached_block_causal_h32_d128"
PREFIX0 = "prefix_cached_block_causal_h32_d128_prefix0"


def small_prefix0(ids: list[int]) -> dict:
    """A prefix0 input set with the given layout (tiny activations, valid values)."""
    n = len(ids)
    q = torch.zeros(1, n, 32, 128, dtype=torch.bfloat16)
    return {"Q": q, "K_current": q.clone(), "V_current": q.clone(),
            "image_ids": torch.tensor(ids, dtype=torch.int32)}


@pytest.mark.parametrize("ids", [[-1, -1, -1], [0, 0, 0], [-1, 0, 0, 1, -1, 2, 2, -1],
                                 [3, 3, 0, 7, 7, -1]])
def test_valid_layouts_pass(ids: list[int]) -> None:
    """Adjacent images with distinct IDs and IDs in any order are valid."""
    assert check(PREFIX0, small_prefix0(ids)) == []


def test_negative_id_other_than_minus_one() -> None:
    problems = check(PREFIX0, small_prefix0([-1, 0, 0, -2, -1]))
    assert len(problems) == 1
    assert problems[0].startswith("image_ids:") and "-1 (text)" in problems[0]
    assert "position 3 = -2" in problems[0]


def test_reused_id_in_two_blocks() -> None:
    problems = check(PREFIX0, small_prefix0([-1, 0, 0, -1, 1, 1, 0, 0]))
    assert len(problems) == 1
    assert problems[0].startswith("image_ids:") and "contiguous" in problems[0]
    assert "ID 0" in problems[0] and "[1, 6]" in problems[0]


def test_non_finite_activation() -> None:
    inputs = gen.generate(kit.definition(PREFIX), {"B": 1, "Nq": 3, "Np": 2}, 0)
    inputs["V_prefix"][0, 1, 5, 7] = float("nan")
    problems = check(PREFIX, inputs)
    assert len(problems) == 1
    assert problems[0].startswith("V_prefix:") and "finite" in problems[0]
    assert "(0, 1, 5, 7)" in problems[0]
