"""The published acceptance rules for one output, applied in bounded-memory chunks.

1. shape, dtype and device equal the reference's;
2. integer and bool outputs are exactly equal;
3. any non-finite value in candidate or reference fails;
4. matching elements are counted as integers and the matched ratio must reach
   ``required_matched_ratio`` (every element when it is null);
5. max absolute error, max relative error, matched ratio and mismatch count are reported.

Comparison runs over chunks of ``CHUNK`` elements (in FP32, or FP64 for FP32 outputs), so a
10⁹-element output needs a few chunk-sized temporaries rather than several full copies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction

import torch

from hf_eval.dtypes import is_exact
from hf_eval.records import Status
from hf_eval.schema import Tolerance

CHUNK = 1 << 22
REL_EPS = 1e-8


@dataclass
class OutputVerdict:
    """The verdict on one output and the numbers that explain it."""

    name: str
    passed: bool
    status: Status  # PASSED, INCORRECT_SHAPE, INCORRECT_DTYPE or INCORRECT_NUMERICAL
    reason: str = ""
    numel: int = 0
    mismatched: int = 0
    matched_ratio: float = 0.0
    max_absolute_error: float = 0.0
    max_relative_error: float = 0.0
    non_finite: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def compare(name: str, candidate: torch.Tensor, reference: torch.Tensor,
            tol: Tolerance) -> OutputVerdict:
    """Judge ``candidate`` against ``reference`` under ``tol`` (never modifies either)."""
    if candidate.shape != reference.shape:
        return OutputVerdict(name, False, Status.INCORRECT_SHAPE,
                             f"shape {tuple(candidate.shape)} != {tuple(reference.shape)}")
    if candidate.dtype != reference.dtype:
        return OutputVerdict(name, False, Status.INCORRECT_DTYPE,
                             f"dtype {candidate.dtype} != {reference.dtype}")
    if candidate.device != reference.device:
        return OutputVerdict(name, False, Status.INCORRECT_SHAPE,
                             f"device {candidate.device} != {reference.device}")

    numel = reference.numel()
    a_flat = candidate.contiguous().view(-1) if numel else candidate.reshape(-1)
    r_flat = reference.contiguous().view(-1) if numel else reference.reshape(-1)
    exact = is_exact(reference.dtype)
    # 16-bit and 8-bit floats are exact in FP32; FP32 outputs are compared in FP64.
    compute = torch.float64 if reference.dtype == torch.float32 else torch.float32
    mismatched = non_finite = 0
    max_abs = max_rel = 0.0
    for start in range(0, numel, CHUNK):
        a = a_flat[start:start + CHUNK]
        r = r_flat[start:start + CHUNK]
        if exact:
            bad = a != r
            mismatched += int(bad.sum())
            if bad.any():
                d = (a.to(torch.float64) - r.to(torch.float64)).abs()
                max_abs = max(max_abs, float(d.max()))
            continue
        a32, r32 = a.to(compute), r.to(compute)
        diff = (a32 - r32).abs_()
        finite = torch.isfinite(diff)  # false when either side is NaN or infinite
        non_finite += a.numel() - int(finite.sum())
        scale = r32.abs()  # never in place: r32 may be the reference itself
        if tol.comparison == "absolute_or_relative":
            ok = (diff <= tol.atol) | (diff <= tol.rtol * (scale + REL_EPS))
        else:
            ok = diff <= tol.atol + tol.rtol * scale
        mismatched += a.numel() - int((ok & finite).sum())
        diff = torch.where(finite, diff, 0.0)
        max_abs = max(max_abs, float(diff.max()))
        # in FP64: a finite FP32 difference over a small scale can overflow FP32
        max_rel = max(max_rel, float((diff.double() / (scale.double() + REL_EPS)).max()))
        del a32, r32, diff, finite, scale, ok

    matched = numel - mismatched
    ratio = matched / numel if numel else 1.0
    verdict = OutputVerdict(name, True, Status.PASSED, numel=numel, mismatched=mismatched,
                            matched_ratio=ratio, max_absolute_error=max_abs,
                            max_relative_error=max_rel, non_finite=non_finite)
    if exact:
        if mismatched:
            verdict.passed, verdict.status = False, Status.INCORRECT_NUMERICAL
            verdict.reason = (f"{mismatched} of {numel} integer elements differ "
                              "(exact match required)")
        return verdict
    if non_finite:
        verdict.passed, verdict.status = False, Status.INCORRECT_NUMERICAL
        verdict.reason = f"{non_finite} non-finite elements (candidate or reference)"
        return verdict
    required = tol.required_matched_ratio
    # Integer comparison: with no ratio every element must match; with a ratio, the
    # matched count must reach ceil(ratio * numel) without trusting a float mean.
    needed = numel if required is None else _ceil_ratio(required, numel)
    if matched < needed:
        verdict.passed, verdict.status = False, Status.INCORRECT_NUMERICAL
        verdict.reason = (f"{mismatched} of {numel} elements outside tolerance "
                          f"(matched {matched}, need {needed}); max abs err {max_abs:.3g}")
    return verdict


def _ceil_ratio(ratio: float, numel: int) -> int:
    """Smallest integer count c with c / numel >= ratio, computed exactly via fractions."""
    frac = Fraction(str(ratio)) * numel
    return -(-frac.numerator // frac.denominator)


def compare_outputs(names: list[str], candidate: object, reference: tuple[torch.Tensor, ...],
                    tolerance_for) -> list[OutputVerdict]:
    """Judge every output; ``candidate`` is what the solution returned (tensor or tuple)."""
    produced = candidate if isinstance(candidate, (tuple, list)) else (candidate,)
    if len(produced) != len(names):
        return [OutputVerdict(names[0] if names else "?", False, Status.INCORRECT_SHAPE,
                              f"returned {len(produced)} outputs, the definition has "
                              f"{len(names)} ({', '.join(names)})")]
    verdicts = []
    for name, got, ref in zip(names, produced, reference):
        if type(got) is not torch.Tensor:
            verdicts.append(OutputVerdict(
                name, False, Status.INCORRECT_DTYPE,
                f"returned {type(got).__name__}, not a plain torch.Tensor"))
            continue
        verdicts.append(compare(name, got, ref, tolerance_for(name)))
    return verdicts
