"""Every published acceptance rule, checked with hand-made tensors."""

from __future__ import annotations

import pytest
import torch

from hf_eval.data.schema import Tolerance
from hf_eval.judge import acceptance
from hf_eval.judge.acceptance import compare, compare_outputs

BF16 = Tolerance(atol=0.005, rtol=0.016)


def test_identical_passes_and_reports_zero_error():
    r = torch.randn(64, 32).bfloat16()
    v = compare("o", r.clone(), r, BF16)
    assert v.passed and v.status == "PASSED" and v.mismatched == 0 and v.max_absolute_error == 0


def test_shape_dtype_device_must_match():
    r = torch.zeros(4, 4, dtype=torch.bfloat16)
    wide = torch.zeros(4, 5, dtype=torch.bfloat16)
    assert compare("o", wide, r, BF16).status == "INCORRECT_SHAPE"
    assert compare("o", torch.zeros(4, 4), r, BF16).status == "INCORRECT_DTYPE"
    assert compare("o", torch.zeros(16, dtype=torch.bfloat16), r, BF16).status == "INCORRECT_SHAPE"


def test_device_mismatch_fails():
    r = torch.zeros(2, dtype=torch.float32)
    meta = torch.empty(2, dtype=torch.float32, device="meta")
    v = compare("o", meta, r, BF16)
    assert not v.passed and "device" in v.reason


def test_allclose_bound_is_inclusive_and_relative_to_reference():
    r = torch.tensor([1.0, 100.0, 0.0], dtype=torch.float64)
    tol = Tolerance(atol=0.5, rtol=0.25)
    inside = r + torch.tensor([0.75, 25.5, 0.5], dtype=torch.float64)  # atol + rtol|r| exactly
    assert compare("o", inside, r, tol).passed
    outside = r + torch.tensor([0.0, 0.0, 0.51], dtype=torch.float64)
    v = compare("o", outside, r, tol)
    assert not v.passed and v.mismatched == 1


def test_absolute_or_relative_mode():
    tol = Tolerance(atol=0.01, rtol=0.01, comparison="absolute_or_relative")
    r = torch.tensor([1000.0, 0.001], dtype=torch.float64)
    a = torch.tensor([1009.0, 0.0105], dtype=torch.float64)  # relative ok / absolute ok
    assert compare("o", a, r, tol).passed
    # Near r = 1 allclose accepts |a - r| <= 0.01 + 0.01 = 0.02; absolute_or_relative only 0.01.
    b = torch.tensor([1000.0, 1.015], dtype=torch.float64)
    r = torch.tensor([1000.0, 1.0], dtype=torch.float64)
    assert not compare("o", b, r, tol).passed
    assert compare("o", b, r, Tolerance(atol=0.01, rtol=0.01)).passed


def test_integers_must_be_exact_whatever_the_tolerance():
    r = torch.tensor([3, 1, 2], dtype=torch.int64)
    loose = Tolerance(atol=10.0, rtol=10.0)
    v = compare("ids", torch.tensor([3, 2, 2]), r, loose)
    assert not v.passed and v.mismatched == 1
    assert compare("mask", torch.tensor([True, False]), torch.tensor([True, False]), loose).passed
    mask = torch.tensor([True, False])
    assert not compare("mask", torch.tensor([True, True]), mask, loose).passed


@pytest.mark.parametrize("where", ["candidate", "reference"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_fails(where, value):
    r = torch.ones(8)
    a = torch.ones(8)
    (a if where == "candidate" else r)[3] = value
    v = compare("o", a, r, Tolerance(atol=1e9, rtol=1e9))
    assert not v.passed and v.non_finite == 1


def test_matched_ratio_is_counted_exactly():
    # 10_000 elements, ratio 0.9999 → exactly one mismatch is allowed, two are not.
    r = torch.zeros(10_000)
    tol = Tolerance(atol=0.0, rtol=0.0, required_matched_ratio=0.9999)
    one = r.clone()
    one[0] = 1
    two = one.clone()
    two[1] = 1
    assert compare("o", one, r, tol).passed
    v = compare("o", two, r, tol)
    assert not v.passed and v.mismatched == 2


def test_every_element_required_when_ratio_is_null():
    r = torch.zeros(1 << 20)
    a = r.clone()
    a[-1] = 1
    v = compare("o", a, r, Tolerance(atol=0.0, rtol=0.0))
    assert not v.passed and v.mismatched == 1 and v.matched_ratio < 1


def test_chunked_comparison_of_1e8_elements(monkeypatch):
    """10^8 bf16 elements: failures in different chunks are all counted."""
    n = 100_000_000
    r = torch.zeros(n, dtype=torch.bfloat16)
    a = torch.zeros(n, dtype=torch.bfloat16)
    bad = [0, acceptance.CHUNK - 1, acceptance.CHUNK, n // 2, n - 1]
    a[bad] = 1
    v = compare("o", a, r, BF16)
    assert v.numel == n and v.mismatched == len(bad) and v.max_absolute_error == 1.0


def test_output_count_and_type_checked():
    ref = (torch.zeros(2), torch.zeros(1, dtype=torch.int64))
    names = ["y", "count"]
    tol = lambda name: BF16  # noqa: E731
    assert compare_outputs(names, torch.zeros(2), ref, tol)[0].status == "INCORRECT_SHAPE"
    verdicts = compare_outputs(names, (torch.zeros(2), [0]), ref, tol)
    assert verdicts[1].status == "INCORRECT_DTYPE" and "plain torch.Tensor" in verdicts[1].reason

    class Sub(torch.Tensor):
        pass

    verdicts = compare_outputs(names, (torch.zeros(2).as_subclass(Sub), ref[1]), ref, tol)
    assert verdicts[0].status == "INCORRECT_DTYPE"
