"""``hf_eval.judge.acceptance`` against the published acceptance rule, input by input.

The published rule (the dataset's ``scripts/task_acceptance.py::compare_output``) judges a
whole output at once; ``hf_eval.judge.acceptance`` judges it in chunks. :func:`published_rule`
below restates the published rule in its most literal, unchunked form; every case of a
seeded random corpus and of a list of hand-made edge cases must get the same verdict from
both: passed, or failed by the same rule (shape/dtype/device, exact equality, non-finite
values, tolerance). Where the published source commit is readable (``HF_EVAL_PUBLISHED``,
else ``../shared/seed/`` beside the clone), its own ``compare_output`` is extracted from
the commit's diff when the test runs and put through the same corpus.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
import torch

from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.formats import decode_fp4_e2m1
from hf_eval.data.schema import Tolerance
from hf_eval.judge import acceptance
from hf_eval.judge.acceptance import compare, ratio_reached

REPO = Path(__file__).resolve().parent.parent

#: A verdict as both sides state it: "passed", or the class of rule that failed.
SHAPE, EXACT, FINITE, TOLERANCE, PASSED = ("shape/dtype/device", "exact", "finite",
                                           "tolerance", "passed")
Judge = Callable[[torch.Tensor, torch.Tensor, dict], str]


# --------------------------------------------------------------------------- the oracle
def published_rule(actual: torch.Tensor, expected: torch.Tensor, tolerance: dict) -> str:
    """The published rule, whole-tensor, as it reads (FP32 arithmetic throughout)."""
    if (actual.shape != expected.shape or actual.dtype != expected.dtype
            or actual.device != expected.device):
        return SHAPE
    if not actual.is_floating_point():
        return PASSED if torch.equal(actual, expected) else EXACT
    if not bool(torch.isfinite(actual).all()) or not bool(torch.isfinite(expected).all()):
        return FINITE
    error = (actual.float() - expected.float()).abs()
    if tolerance.get("comparison") == "absolute_or_relative":
        close = (error <= tolerance["atol"]) | (
            error / (expected.float().abs() + 1e-8) <= tolerance["rtol"])
    else:
        close = error <= tolerance["atol"] + tolerance["rtol"] * expected.float().abs()
    matched = int(close.sum())
    ratio = matched / close.numel() if close.numel() else 1.0
    required = tolerance.get("required_matched_ratio")
    return TOLERANCE if ratio < (1.0 if required is None else required) else PASSED


def ours(actual: torch.Tensor, expected: torch.Tensor, tolerance: dict) -> str:
    verdict = compare("o", actual, expected, Tolerance(**tolerance))
    if verdict.passed:
        return PASSED
    return SHAPE if verdict.rule in ("shape", "dtype", "device") else verdict.rule


def exact_fp32(t: torch.Tensor) -> torch.Tensor:
    """The exact FP32 values of an FP8 E4M3 or packed FP4 tensor."""
    if t.dtype == torch.float4_e2m1fn_x2:
        return decode_fp4_e2m1(t.view(torch.uint8))
    return t.float()


def judged(judge: Judge, a: torch.Tensor, r: torch.Tensor, tolerance: dict) -> str:
    """``judge``'s verdict; where torch cannot run the published rule on a dtype (no
    ``isfinite`` for FP8 E4M3, no arithmetic for FP4) the rule on the exact FP32 values,
    which is what ``hf_eval.judge.acceptance`` applies to them."""
    try:
        return judge(a, r, tolerance)
    except NotImplementedError:
        if judge is ours or a.dtype not in (torch.float8_e4m3fn, torch.float4_e2m1fn_x2):
            raise
        return judge(exact_fp32(a), exact_fp32(r), tolerance)


# --------------------------------------------------------------------------- the corpus
def task_tolerances() -> list[dict]:
    """Every distinct tolerance the tasks publish (acceptance, per output, diagnostic)."""
    seen: dict[str, dict] = {}
    for path in sorted((REPO / "tasks").glob("*.json")):
        task = json.loads(path.read_text())
        for tol in (task["tolerance"], *task.get("output_tolerances", {}).values(),
                    task.get("diagnostic_tolerance")):
            if tol:
                full = Tolerance(**tol).model_dump()
                seen[json.dumps(full, sort_keys=True)] = full
    return list(seen.values())


def tol(atol: float, rtol: float, ratio: float | None = None,
        comparison: str = "allclose") -> dict:
    return {"atol": atol, "rtol": rtol, "required_matched_ratio": ratio,
            "comparison": comparison}


TOLERANCES = [*task_tolerances(), tol(0.0, 0.016), tol(0.005, 0.0),
              tol(0.01, 0.01, 0.5, "absolute_or_relative"), tol(1e-3, 1e-3, 0.999),
              tol(0.1, 0.25, 0.9), tol(0.0, 0.0, 0.75, "absolute_or_relative"),
              tol(0.0, 0.016, None, "absolute_or_relative")]
FLOATS = [torch.bfloat16, torch.float16, torch.float32, torch.float64,
          torch.float8_e4m3fn, torch.float8_e5m2]
INTEGERS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]
#: Small chunk sizes put chunk boundaries everywhere in a small tensor.
CHUNKS = [1, 2, 3, 7, 64, 1 << 22]


@dataclass
class Case:
    """One comparison: candidate, reference, tolerance, and the chunk size to use."""

    label: str
    """Where the case comes from (shown when it fails)."""
    a: torch.Tensor
    """The candidate output."""
    r: torch.Tensor
    """The reference output."""
    tol: dict
    """The tolerance, as a task file writes it."""
    chunk: int = 1 << 22
    """``hf_eval.judge.acceptance.CHUNK`` while it is judged."""


def _draw_floats(g: torch.Generator, n: int, dtype: torch.dtype, t: dict) -> Case:
    """A reference across magnitudes (zeros, -0.0, subnormals included) and a candidate
    whose errors sit near the tolerance bound, now and then NaN or infinite."""
    mag = torch.pow(10.0, torch.empty(n, dtype=torch.float64).uniform_(-4, 3, generator=g))
    r = torch.randn(n, generator=g, dtype=torch.float64) * mag
    pick = torch.rand(n, generator=g)
    r[pick < 0.05] = 0.0
    r[(pick >= 0.05) & (pick < 0.08)] = -0.0
    tiny = {torch.float16: 3e-8, torch.bfloat16: 1e-40, torch.float32: 1e-42,
            torch.float64: 1e-310}.get(dtype, 0.0)
    r[(pick >= 0.08) & (pick < 0.1)] = tiny
    bound = t["atol"] + t["rtol"] * r.abs()
    factor = torch.tensor([0.0, 0.5, 0.999, 1.0, 1.001, 2.0, 50.0],
                          dtype=torch.float64)[torch.randint(0, 7, (n,), generator=g)]
    sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    a = r + sign * factor * bound
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        r, a = r.clamp(-400, 400), a.clamp(-400, 400)
    r, a = r.to(dtype), a.to(dtype)
    for side in (a, r):
        if torch.rand(1, generator=g).item() < 0.15:
            at = int(torch.randint(0, max(n, 1), (1,), generator=g)) if n else None
            if at is not None:
                bad = [float("nan"), float("inf"), float("-inf")][at % 3]
                if dtype == torch.float8_e4m3fn:
                    bad = float("nan")  # the format has no infinity
                side[at] = bad
    return Case(f"random {dtype} n={n}", a, r, t)


def _draw_integers(g: torch.Generator, n: int, dtype: torch.dtype) -> Case:
    if dtype == torch.bool:
        r = torch.rand(n, generator=g) < 0.5
    else:
        info = torch.iinfo(dtype)
        r = torch.randint(max(info.min, -1000), min(info.max, 1000), (n,), generator=g,
                          dtype=torch.int64).to(dtype)
    a = r.clone()
    if n and torch.rand(1, generator=g).item() < 0.5:
        at = int(torch.randint(0, n, (1,), generator=g))
        a[at] = ~a[at] if dtype == torch.bool else a[at] + 1
    return Case(f"random {dtype} n={n}", a, r, TOLERANCES[0])


def random_corpus(count: int = 600, seed: int = 2026) -> Iterator[Case]:
    g = torch.Generator().manual_seed(seed)
    sizes = [0, 1, 2, 3, 5, 8, 63, 64, 65, 257, 1000, 4096]
    for i in range(count):
        n = sizes[int(torch.randint(0, len(sizes), (1,), generator=g))]
        chunk = CHUNKS[int(torch.randint(0, len(CHUNKS), (1,), generator=g))]
        if i % 5 == 4:
            case = _draw_integers(g, n, INTEGERS[i // 5 % len(INTEGERS)])
        else:
            t = TOLERANCES[int(torch.randint(0, len(TOLERANCES), (1,), generator=g))]
            case = _draw_floats(g, n, FLOATS[i % len(FLOATS)], t)
        if n % 2 == 0 and n >= 4 and i % 3 == 0:  # a 2-D, non-contiguous view
            case.a = case.a.reshape(2, -1).t()
            case.r = case.r.reshape(2, -1).t()
        case.chunk = chunk if n <= 257 else max(chunk, 64)  # boundaries, in bounded time
        yield case


def edge_cases() -> Iterator[Case]:
    f32, bf16 = torch.float32, torch.bfloat16
    t0, bf = tol(0.0, 0.0), tol(0.005, 0.016)
    either = tol(0.01, 0.01, None, "absolute_or_relative")
    yield Case("empty float", torch.empty(0, 3), torch.empty(0, 3), bf)
    yield Case("empty int", torch.empty(0, dtype=torch.int32),
               torch.empty(0, dtype=torch.int32), bf)
    yield Case("empty bool", torch.empty(0, dtype=torch.bool), torch.empty(0, dtype=torch.bool),
               bf)
    yield Case("empty under a ratio", torch.empty(0), torch.empty(0), tol(0.0, 0.0, 0.5))
    yield Case("0-dim", torch.tensor(1.0), torch.tensor(1.0 + 2 ** -20), tol(0.0, 0.0))
    yield Case("shape", torch.zeros(4, 4, dtype=bf16), torch.zeros(4, 5, dtype=bf16), bf)
    yield Case("same numel, other shape", torch.zeros(16), torch.zeros(4, 4), bf)
    yield Case("dtype", torch.zeros(4), torch.zeros(4, dtype=bf16), bf)
    yield Case("device", torch.empty(2, device="meta"), torch.zeros(2), bf)
    yield Case("-0.0 vs 0.0", torch.tensor([-0.0, 0.0]), torch.tensor([0.0, -0.0]), t0)
    yield Case("NaN both sides", torch.tensor([float("nan")]), torch.tensor([float("nan")]), bf)
    yield Case("inf both sides", torch.tensor([float("inf")]), torch.tensor([float("inf")]), bf)
    yield Case("-inf in reference", torch.ones(3), torch.tensor([1.0, -math.inf, 1.0]),
               tol(1e9, 1e9))
    yield Case("NaN under a ratio", torch.tensor([1.0, float("nan")] + [1.0] * 98),
               torch.ones(100), tol(0.0, 0.0, 0.5))
    big = torch.finfo(f32).max
    # both sides finite, the FP32 difference infinite: a tolerance failure, not non-finite
    yield Case("FP32 difference overflows", torch.tensor([big, 0.0]), torch.tensor([-big, 0.0]),
               tol(0.0, 1.0))
    yield Case("FP32 difference overflows under a ratio", torch.tensor([big, 0.0]),
               torch.tensor([-big, 0.0]), tol(0.0, 1.0, 0.5))
    # finite in FP64, infinite once narrowed to FP32 as the published rule does
    yield Case("FP64 beyond FP32", torch.tensor([1e300, 1.0], dtype=torch.float64),
               torch.tensor([1e300, 1.0], dtype=torch.float64), tol(0.0, 0.0))
    yield Case("FP64 beyond FP32 under a ratio", torch.tensor([1e300, 1.0], dtype=torch.float64),
               torch.tensor([1e300, 1.0], dtype=torch.float64), tol(0.0, 0.0, 0.5))
    yield Case("FP64 difference below FP32 resolution",
               torch.tensor([1.0 + 1e-12], dtype=torch.float64),
               torch.tensor([1.0], dtype=torch.float64), t0)
    sub = torch.tensor([1e-45])
    yield Case("subnormal, allclose bound underflows", torch.zeros(1), sub, tol(0.0, 0.016))
    yield Case("subnormal, relative with epsilon", torch.zeros(1), sub,
               tol(0.0, 0.016, None, "absolute_or_relative"))
    yield Case("bf16 subnormal", torch.tensor([0.0], dtype=bf16),
               torch.tensor([1e-40], dtype=bf16), t0)
    yield Case("fp16 subnormal", torch.tensor([0.0], dtype=torch.float16),
               torch.tensor([6e-8], dtype=torch.float16), tol(6e-8, 0.0))
    yield Case("absolute_or_relative, relative side", torch.tensor([1009.0]),
               torch.tensor([1000.0]), either)
    yield Case("absolute_or_relative, neither", torch.tensor([1.015]), torch.tensor([1.0]),
               either)
    nan8 = torch.tensor([0x7F], dtype=torch.uint8).view(torch.float8_e4m3fn)
    yield Case("FP8 E4M3 NaN", nan8, torch.zeros(1, dtype=torch.float8_e4m3fn), bf)
    yield Case("FP8 E4M3 -0", torch.tensor([-0.0]).to(torch.float8_e4m3fn),
               torch.tensor([0.0]).to(torch.float8_e4m3fn), t0)
    yield Case("FP8 E5M2 inf", torch.tensor([math.inf]).to(torch.float8_e5m2),
               torch.zeros(1, dtype=torch.float8_e5m2), bf)
    packed = torch.tensor([0x12, 0x9A, 0x00], dtype=torch.uint8)
    fp4 = packed.view(torch.float4_e2m1fn_x2)
    yield Case("FP4 equal", fp4, fp4.clone(), t0)
    other = torch.tensor([0x12, 0x9B, 0x00], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    yield Case("FP4 one value differs", other, fp4, t0)
    yield Case("FP4 one value differs, loose", other, fp4, tol(0.6, 0.0))
    yield Case("FP4 one value in six differs, ratio", other, fp4, tol(0.0, 0.0, 5 / 6))
    i64 = torch.iinfo(torch.int64)
    yield Case("int64 extremes", torch.tensor([i64.max, i64.min]),
               torch.tensor([i64.max, i64.min]), bf)
    yield Case("int64 off by one at the top", torch.tensor([i64.max - 1]),
               torch.tensor([i64.max]), tol(10.0, 10.0))
    yield Case("int8 carrier bytes", torch.tensor([-128, 127], dtype=torch.int8),
               torch.tensor([-128, -127], dtype=torch.int8), tol(1e9, 1e9))
    yield Case("bool", torch.tensor([True, False]), torch.tensor([True, True]), tol(1e9, 1e9))
    # the matched ratio exactly at the requirement, and one element short of it
    r = torch.zeros(10_000)
    one, two = r.clone(), r.clone()
    one[0] = 1.0
    two[:2] = 1.0
    for chunk in (1 << 22, 4999, 5000, 9999):
        yield Case(f"ratio at 0.9999, chunk {chunk}", one, r, tol(0.0, 0.0, 0.9999), chunk)
        yield Case(f"ratio below 0.9999, chunk {chunk}", two, r, tol(0.0, 0.0, 0.9999), chunk)
    r = torch.zeros(8, dtype=bf16)
    a = r.clone()
    a[2:4] = 1.0
    yield Case("ratio exactly 0.75", a, r, tol(0.0, 0.0, 0.75), 3)
    yield Case("ratio 0.75 short of 0.7500001", a, r, tol(0.0, 0.0, 0.7500001), 3)


def boundary_cases() -> Iterator[Case]:
    """Candidates at the tolerance bound and a few ulps either side of it, in every
    floating dtype, per tolerance: ties decided by FP32 rounding."""
    g = torch.Generator().manual_seed(7)
    for t in TOLERANCES:
        for dtype in FLOATS:
            r64 = torch.randn(256, generator=g, dtype=torch.float64) * 4
            r = r64.clamp(-400, 400).to(dtype)
            rf = r.double()
            bound = t["atol"] + t["rtol"] * rf.abs()
            a = (rf + bound).to(dtype)
            steps = [a]
            if dtype in (torch.float32, torch.float64):
                up = torch.nextafter(a, torch.full_like(a, math.inf))
                down = torch.nextafter(a, torch.full_like(a, -math.inf))
                steps += [up, down]
            for k, cand in enumerate(steps):
                yield Case(f"bound {dtype} {t} step {k}", cand, r, t, 64)


def fp32_flips() -> list[Case]:
    """Single elements whose verdict in FP32 arithmetic (the published rule) differs from
    the verdict the same formula gives in FP64: they pin the arithmetic precision."""
    g = torch.Generator().manual_seed(11)
    found = []
    for t in TOLERANCES:
        if t["atol"] == 0 and t["rtol"] == 0:
            continue
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            r = (torch.randn(20_000, generator=g, dtype=torch.float64) * 3).to(dtype)
            rd = r.double()
            bound = t["atol"] + t["rtol"] * rd.abs()
            if t["comparison"] == "absolute_or_relative":
                bound = torch.maximum(torch.full_like(rd, t["atol"]),
                                      t["rtol"] * (rd.abs() + 1e-8))
            a = (rd + bound).to(dtype)
            cands = [a]
            if dtype == torch.float32:
                cands += [torch.nextafter(a, torch.full_like(a, math.inf)),
                          torch.nextafter(a, torch.full_like(a, -math.inf))]
            for cand in cands:
                e64 = (cand.double() - rd).abs()
                e32 = (cand.float() - r.float()).abs()
                if t["comparison"] == "absolute_or_relative":
                    ok64 = (e64 <= t["atol"]) | (e64 / (rd.abs() + 1e-8) <= t["rtol"])
                    ok32 = (e32 <= t["atol"]) | (e32 / (r.float().abs() + 1e-8) <= t["rtol"])
                else:
                    ok64 = e64 <= t["atol"] + t["rtol"] * rd.abs()
                    ok32 = e32 <= t["atol"] + t["rtol"] * r.float().abs()
                one = {**t, "required_matched_ratio": None}
                for i in (ok32 != ok64).nonzero().flatten().tolist()[:8]:
                    element = cand[i:i + 1], r[i:i + 1]
                    # the published rule itself, on the one element, decides as FP32 did
                    assert (published_rule(*element, one) == PASSED) == bool(ok32[i])
                    found.append(Case(f"FP32/FP64 flip {dtype} {t} i={i}", *element, one))
    return found


def division_flips() -> list[Case]:
    """Single FP32 elements that ``error / (|r| + 1e-8) <= rtol`` (the published relative
    test) and ``error <= rtol * (|r| + 1e-8)`` judge differently, both in FP32."""
    g = torch.Generator().manual_seed(13)
    t = tol(0.0, 0.016, None, "absolute_or_relative")
    r = (torch.randn(50_000, generator=g, dtype=torch.float64) * 3).float()
    a = (r.double() + t["rtol"] * (r.double().abs() + 1e-8)).float()
    error = (a - r).abs()
    divided = error / (r.abs() + 1e-8) <= t["rtol"]
    multiplied = error <= t["rtol"] * (r.abs() + 1e-8)
    return [Case(f"division vs multiplication i={i}", a[i:i + 1], r[i:i + 1], t)
            for i in (divided != multiplied).nonzero().flatten().tolist()[:40]]


FLIPS = fp32_flips() + division_flips()


def everything() -> Iterator[Case]:
    yield from edge_cases()
    yield from boundary_cases()
    yield from FLIPS
    yield from random_corpus()


def moved(t: torch.Tensor, device: str) -> torch.Tensor:
    """``t`` on ``device`` (a meta tensor stays; packed FP4 travels as its bytes)."""
    if t.device.type == "meta" or device == "cpu":
        return t
    if t.dtype == torch.float4_e2m1fn_x2:
        return t.view(torch.uint8).to(device).view(t.dtype)
    return t.to(device)


def disagreements(judge: Judge, monkeypatch: pytest.MonkeyPatch,
                  device: str = "cpu") -> tuple[list[str], Counter]:
    wrong, seen = [], Counter()
    for case in everything():
        monkeypatch.setattr(acceptance, "CHUNK", case.chunk)
        a, r = moved(case.a, device), moved(case.r, device)
        theirs = judged(judge, a, r, case.tol)
        mine = ours(a, r, case.tol)
        seen[theirs] += 1
        if mine != theirs:
            wrong.append(f"{case.label}: published {theirs}, hf_eval {mine}")
    return wrong, seen


# --------------------------------------------------------------------------- the tests
def test_the_corpus_reaches_every_verdict_and_the_precision_flips():
    """The comparison below is only worth something if the corpus holds every verdict and
    cases where FP64 arithmetic would decide otherwise."""
    seen = Counter(judged(published_rule, c.a, c.r, c.tol) for c in everything())
    assert all(seen[v] >= 20 for v in (PASSED, EXACT, FINITE, TOLERANCE)), seen
    assert seen[SHAPE] >= 4, seen
    # FP32 outputs (16-bit outputs are exact in FP32 and flip nowhere in practice)
    modes = Counter(c.tol["comparison"] for c in FLIPS if c.r.dtype == torch.float32)
    assert modes["allclose"] >= 20 and modes["absolute_or_relative"] >= 5, modes
    assert sum(c.label.startswith("division") for c in FLIPS) >= 20


@pytest.mark.parametrize("device", [
    "cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                         reason="no CUDA device"))])
def test_same_verdict_as_the_published_rule_on_every_case(monkeypatch, device):
    wrong, seen = disagreements(published_rule, monkeypatch, device)
    assert not wrong, f"{len(wrong)} of {sum(seen.values())} differ:\n" + "\n".join(wrong[:20])


def test_every_schema_dtype_is_judged():
    """Each dtype a definition may use compares equal to itself and unequal to a changed
    copy (zero tolerance)."""
    for name, dtype in TORCH_DTYPES.items():
        if dtype == torch.float4_e2m1fn_x2:
            r = torch.tensor([0x21, 0x43], dtype=torch.uint8).view(dtype)
            a = torch.tensor([0x21, 0x44], dtype=torch.uint8).view(dtype)
        elif dtype == torch.bool:
            r, a = torch.tensor([True, False]), torch.tensor([True, True])
        else:
            r = torch.tensor([1.0, 2.0]).to(dtype)
            a = torch.tensor([1.0, 3.0]).to(dtype)
        zero = tol(0.0, 0.0)
        assert ours(r.clone(), r, zero) == PASSED, name
        expected = EXACT if not dtype.is_floating_point else TOLERANCE
        assert ours(a, r, zero) == expected == judged(published_rule, a, r, zero), name


def test_chunk_size_changes_no_number(monkeypatch):
    """Not only the verdict: every count and figure is the same whatever the chunking."""
    for case in list(random_corpus(120, seed=5)):
        results = []
        for chunk in (3, 64, 1 << 22):
            monkeypatch.setattr(acceptance, "CHUNK", chunk)
            v = compare("o", case.a, case.r, Tolerance(**case.tol))
            results.append(v.to_json())
        assert results[0] == results[1] == results[2], case.label


def test_matched_ratio_is_the_published_float_comparison():
    """``matched / numel`` as a float against the requirement, not an exact fraction:
    where the two part (counts no tensor here reaches), the published float decides."""
    n = 2 ** 54
    assert ratio_reached(n - 1, n, None) == (1.0, True)  # 1 - 2^-54 rounds to 1.0
    assert ratio_reached(n - 2, n, None)[1] is False
    assert ratio_reached(0, 0, 0.9999) == (1.0, True)
    parted = 0
    for numel in range(10 ** 17, 10 ** 17 + 2000):
        matched = math.ceil(Fraction("0.9999") * numel) - 1  # exactly just below 0.9999
        float_verdict = not matched / numel < 0.9999
        assert ratio_reached(matched, numel, 0.9999)[1] is float_verdict
        parted += float_verdict  # the exact fraction says no; the float may say yes
    assert parted > 0


def test_the_verdict_names_its_rule_and_counts():
    big = torch.finfo(torch.float32).max
    v = compare("o", torch.tensor([big]), torch.tensor([-big]), Tolerance(atol=0, rtol=1))
    assert (v.rule, v.non_finite, v.mismatched) == ("tolerance", 0, 1)
    assert math.isfinite(v.max_absolute_error) and v.max_absolute_error > 6e38
    v = compare("o", torch.tensor([1.0, math.nan]), torch.ones(2), Tolerance(atol=1, rtol=1))
    assert (v.rule, v.non_finite, v.passed) == ("finite", 1, False)
    v = compare("o", torch.tensor([3]), torch.tensor([2]), Tolerance(atol=9, rtol=9))
    assert (v.rule, v.mismatched, v.max_absolute_error) == ("exact", 1, 1.0)


# ------------------------------------------------------- the published source, when present
def published_source_dir() -> Path | None:
    configured = os.environ.get("HF_EVAL_PUBLISHED")
    for candidate in [Path(configured) if configured else REPO.parent / "shared/seed"]:
        if candidate.is_dir() and any(candidate.glob("*.txt")):
            return candidate
    return None


def extract_compare_output(folder: Path) -> Callable[..., dict]:
    """``compare_output`` from the commit's diff: the added lines of the hunk that creates
    ``scripts/task_acceptance.py``, run in a namespace of their own."""
    for diff in sorted(folder.glob("*.txt")):
        lines = diff.read_text().splitlines()
        if "scripts/task_acceptance.py" not in lines:
            continue
        start = lines.index("scripts/task_acceptance.py")
        hunk = next(i for i in range(start, len(lines)) if lines[i].startswith("@@"))
        body = []
        for line in lines[hunk + 1:]:
            if not line.startswith("+"):
                break
            body.append(line[1:])
        namespace: dict = {}
        exec(compile("\n".join(body) + "\n", f"{diff.name}:task_acceptance.py", "exec"),
             namespace)
        return namespace["compare_output"]
    raise AssertionError(f"no scripts/task_acceptance.py in {folder}")


#: The published function's failure messages, by the rule they report.
MESSAGES = [(r"^Output shape, dtype or device", SHAPE), (r"^Integer output", EXACT),
            (r"^Nonfinite", FINITE), (r"^Matched ", TOLERANCE)]


def as_judge(compare_output: Callable[..., dict]) -> Judge:
    def judge(a: torch.Tensor, r: torch.Tensor, tolerance: dict) -> str:
        try:
            compare_output(a, r, tolerance)
        except AssertionError as err:
            for pattern, rule in MESSAGES:
                if re.match(pattern, str(err)):
                    return rule
            raise
        return PASSED
    return judge


def test_same_verdict_as_the_published_source(monkeypatch):
    folder = published_source_dir()
    if folder is None:
        pytest.skip("the published source commit is not readable here (set "
                    "HF_EVAL_PUBLISHED to its folder)")
    judge = as_judge(extract_compare_output(folder))
    wrong, seen = disagreements(judge, monkeypatch)
    assert not wrong, f"{len(wrong)} of {sum(seen.values())} differ:\n" + "\n".join(wrong[:20])
    assert all(seen[v] for v in (PASSED, SHAPE, EXACT, FINITE, TOLERANCE)), seen
