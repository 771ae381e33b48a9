"""Value rules of mixed MLA: each rule is violated once.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

import math

import torch

from hf_eval.families.mixed_mla import check
from tests import kit

NAME = "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512"
CASES = kit.cases(NAME)
KV8_SCALES = 64 * 640  # byte where a KV8 page's scale rows start
KV4_SCALES = 64 * 384  # byte where a KV4 page's scale rows start


def _case(label: str) -> dict:
    return kit.case_inputs(NAME, label)


def _base() -> dict:
    """A fresh copy of a valid workload (2 KV8 pages, 9 KV4 pages)."""
    return {k: v.clone() if isinstance(v, torch.Tensor) else v
            for k, v in _case("b3_empty_rows").items()}


def _referenced(inputs: dict, key: str) -> int:
    """One slot that a valid index of ``key`` references."""
    rows = inputs[key]
    return int(rows[rows != -1][0])


def test_index_out_of_range_is_reported() -> None:
    inputs = _base()
    inputs["indices8"][2, 0] = 2 * 64  # P8 = 2: slot 128 does not exist
    problems = check(NAME, inputs)
    assert len(problems) == 1 and problems[0].startswith("indices8:") and "128" in problems[0]


def test_negative_index_other_than_minus_one_is_reported() -> None:
    inputs = _base()
    inputs["indices4"][1, 3] = -2
    problems = check(NAME, inputs)
    assert len(problems) == 1 and problems[0].startswith("indices4:")


def test_non_positive_or_non_finite_fp8_scale_of_a_referenced_slot_is_reported() -> None:
    for bad in (0.0, -1.0, math.nan, math.inf):
        inputs = _base()
        slot = _referenced(inputs, "indices8")
        start = KV8_SCALES + 16 * (slot % 64) + 4  # second of the slot's 4 scales
        inputs["KV8"][slot // 64, start: start + 4] = torch.tensor([bad]).view(torch.int8)
        problems = check(NAME, inputs)
        assert len(problems) == 1 and problems[0].startswith("KV8:") and "scale" in problems[0]


def test_fp8_nan_code_in_a_referenced_slot_is_reported() -> None:
    inputs = _base()
    slot = _referenced(inputs, "indices8")
    inputs["KV8"][slot // 64, 640 * (slot % 64) + 77] = 0x7F
    problems = check(NAME, inputs)
    assert len(problems) == 1 and problems[0].startswith("KV8:") and "NaN" in problems[0]


def test_non_finite_rope_of_a_referenced_slot_is_reported() -> None:
    for key, payload, rows in (("KV8", 640, "indices8"), ("KV4", 384, "indices4")):
        inputs = _base()
        slot = _referenced(inputs, rows)
        start = payload * (slot % 64) + payload - 2  # the last BF16 rope value
        inputs[key][slot // 64, start: start + 2] = torch.tensor(
            [math.inf], dtype=torch.bfloat16).view(torch.int8)
        problems = check(NAME, inputs)
        assert len(problems) == 1 and problems[0].startswith(f"{key}:") and "rope" in problems[0]


def test_ue8m0_byte_255_in_a_referenced_slot_is_reported() -> None:
    inputs = _base()
    slot = _referenced(inputs, "indices4")
    inputs["KV4"][slot // 64, KV4_SCALES + 16 * (slot % 64) + 15] = -1  # byte 255
    problems = check(NAME, inputs)
    assert len(problems) == 1 and problems[0].startswith("KV4:") and "255" in problems[0]


def test_garbage_in_unreferenced_slots_is_accepted() -> None:
    inputs = _base()
    used8 = set(inputs["indices8"][inputs["indices8"] != -1].tolist())
    used4 = set(inputs["indices4"][inputs["indices4"] != -1].tolist())
    free8 = next(s for s in range(128) if s not in used8)
    free4 = next(s for s in range(9 * 64) if s not in used4)
    inputs["KV8"][free8 // 64, KV8_SCALES + 16 * (free8 % 64):][:16] = -1  # NaN scales
    inputs["KV8"][free8 // 64, 640 * (free8 % 64)] = 0x7F
    inputs["KV4"][free4 // 64, KV4_SCALES + 16 * (free4 % 64)] = -1
    assert check(NAME, inputs) == []


def test_bad_sink_and_scale_are_reported() -> None:
    kit.assert_sink_and_scale_rules(check, NAME, _base, bad_sink=math.nan, bad_scale=0.0)
