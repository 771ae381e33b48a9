"""Value rules of sparse MLA: each rule is violated once.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

import math

import pytest
import torch

from hf_eval.families.sparse_mla import check
from tests import kit

NAMES = ["sparse_mla_prefill_h64_d512_k128", "sparse_mla_prefill_h64_d512_k640"]
K128 = NAMES[0]


def _base() -> dict:
    """A fresh copy of a valid k128 workload (S = 400, topk_length 128, 0, 77, 128, 5, 100)."""
    return {k: v.clone() if isinstance(v, torch.Tensor) else v
            for k, v in kit.case_inputs(K128, "t6_zero_holes_stale").items()}


@pytest.mark.parametrize("length", [-1, 129])
def test_topk_length_outside_zero_to_topk_is_reported(length: int) -> None:
    inputs = _base()
    inputs["topk_length"][2] = length
    problems = check(K128, inputs)
    assert len(problems) == 1 and problems[0].startswith("topk_length:")


@pytest.mark.parametrize("bad", [400, -2])
def test_leading_index_outside_the_cache_is_reported(bad: int) -> None:
    inputs = _base()
    inputs["indices"][2, 10] = bad  # position 10 < topk_length 77
    problems = check(K128, inputs)
    assert len(problems) == 1 and problems[0].startswith("indices:") and str(bad) in problems[0]


def test_anything_after_topk_length_is_ignored() -> None:
    inputs = _base()
    inputs["indices"][1, :] = 10 ** 6  # topk_length 0: every position is ignored
    inputs["indices"][2, 77:] = -5
    assert check(K128, inputs) == []


def test_bad_sink_and_scale_are_reported() -> None:
    kit.assert_sink_and_scale_rules(check, K128, _base, bad_sink=math.inf, bad_scale=math.nan)
