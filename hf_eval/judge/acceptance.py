"""The published acceptance rule for one output, applied in bounded-memory chunks.

The rule, in the order it is applied (the first that fails decides):

1. ``shape``, ``dtype`` and ``device`` equal the reference's;
2. ``exact``: an output that is not floating point (integers, bool, int8 carriers of
   quantised data) equals the reference element for element;
3. ``finite``: any NaN or infinity in the candidate or in the reference fails;
4. ``tolerance``: both sides are widened to FP32 (FP64 outputs are narrowed to FP32, as
   the published rule does) and ``error = |a - r|`` is taken in FP32; an element matches
   under ``allclose`` when ``error <= atol + rtol * |r|`` and under
   ``absolute_or_relative`` when ``error <= atol`` or ``error / (|r| + 1e-8) <= rtol``,
   every operation in FP32 with ``atol``, ``rtol`` and ``1e-8`` rounded to FP32 first;
   matching elements are counted as integers, and the case fails when
   ``matched / numel`` (a Python float; 1.0 when the output is empty) is below
   ``required_matched_ratio`` (1.0 when it is null).

These are the published ``compare_output``'s operations, element for element, so the two
give the same verdict on every input (``tests/test_acceptance_parity.py`` compares them).
Elementwise results do not depend on how the elements are split, so comparing in chunks of
:data:`CHUNK` elements changes no verdict: a 10⁹-element output needs a few chunk-sized
temporaries rather than several full copies.

Two dtypes the published code cannot evaluate in torch get the same rule on their exact
FP32 values: FP8 E4M3 (torch has no ``isfinite`` for it) and packed FP4 E2M1 (no
arithmetic at all; each byte's two values are compared, so ``numel`` counts values).

Reported beside the verdict, never deciding it: the mismatch count, the matched ratio,
the largest absolute error and the largest relative error ``error / (|r| + 1e-8)`` (in
FP64 where FP32 overflows, so that a huge error over a tiny reference stays finite), both
over the elements whose inputs are finite, and the count of non-finite elements.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import torch

from hf_eval.data.formats import decode_fp4_e2m1
from hf_eval.data.schema import Tolerance
from hf_eval.judge.records import Status

#: Elements compared per step.
CHUNK = 1 << 22
#: Added to ``|r|`` under the relative test of ``absolute_or_relative`` (in FP32).
REL_EPS = 1e-8

#: The rule that decided a verdict (the last one applied).
Rule = Literal["shape", "dtype", "device", "exact", "finite", "tolerance"]


@dataclass
class OutputVerdict:
    """The verdict on one output and the numbers that explain it."""

    name: str
    """The output's name in the definition."""
    passed: bool
    """Whether the output is accepted."""
    status: Status
    """PASSED, INCORRECT_SHAPE (shape, device or output count), INCORRECT_DTYPE (dtype or
    not a plain tensor) or INCORRECT_NUMERICAL (values)."""
    reason: str = ""
    """Why it failed, one line; empty when it passed."""
    numel: int = 0
    """Elements compared (values, for packed FP4)."""
    mismatched: int = 0
    """Elements that differ (exact) or fall outside the tolerance."""
    matched_ratio: float = 0.0
    """``(numel - mismatched) / numel`` as a Python float; 1.0 for an empty output."""
    max_absolute_error: float = 0.0
    """The largest ``|a - r|`` (FP32, or FP64 where FP32 overflows) over elements whose
    inputs are finite."""
    max_relative_error: float = 0.0
    """The largest ``|a - r| / (|r| + 1e-8)`` (FP32, or FP64 where FP32 overflows) over
    elements whose inputs are finite."""
    non_finite: int = 0
    """Elements where the candidate or the reference is NaN or infinite."""
    rule: Rule | None = None
    """The rule that decided the verdict: the one that failed, or for a pass ``exact``
    (not floating point) or ``tolerance``; None for a result that is not a tensor."""

    def to_json(self) -> dict:
        return asdict(self)


def ratio_reached(matched: int, numel: int, required: float | None) -> tuple[float, bool]:
    """The matched ratio and whether it reaches ``required``: ``matched / numel`` as a
    Python float (1.0 for no elements), compared with ``required`` (1.0 when null)."""
    ratio = matched / numel if numel else 1.0
    return ratio, not ratio < (1.0 if required is None else required)


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1) if t.numel() else t.reshape(-1)


def _widen(t: torch.Tensor) -> torch.Tensor:
    """FP32 values of a floating chunk (a no-op for FP32; FP64 is narrowed)."""
    if t.dtype == torch.float4_e2m1fn_x2:
        return decode_fp4_e2m1(t.view(torch.uint8))
    return t.float()


def _finite(t: torch.Tensor, wide: torch.Tensor) -> torch.Tensor:
    """``isfinite`` of the chunk's own values: FP64 is tested before narrowing (a finite
    1e300 is finite), every narrower dtype on its exact FP32 widening."""
    return torch.isfinite(t if t.dtype == torch.float64 else wide)


def _top(values: torch.Tensor, wide: torch.Tensor, finite: torch.Tensor) -> float:
    """The largest of ``values`` (FP32), each non-finite one replaced by its FP64
    counterpart in ``wide``, over the ``finite`` elements; 0.0 when none is finite."""
    values = torch.where(torch.isfinite(values), values.double(), wide)
    values = torch.where(finite & torch.isfinite(values), values, 0.0)
    return float(values.max())


def compare(name: str, candidate: torch.Tensor, reference: torch.Tensor,
            tol: Tolerance) -> OutputVerdict:
    """Judge ``candidate`` against ``reference`` under ``tol`` (never modifies either)."""
    if candidate.shape != reference.shape:
        return OutputVerdict(name, False, Status.INCORRECT_SHAPE,
                             f"shape {tuple(candidate.shape)} != {tuple(reference.shape)}",
                             rule="shape")
    if candidate.dtype != reference.dtype:
        return OutputVerdict(name, False, Status.INCORRECT_DTYPE,
                             f"dtype {candidate.dtype} != {reference.dtype}", rule="dtype")
    if candidate.device != reference.device:
        return OutputVerdict(name, False, Status.INCORRECT_SHAPE,
                             f"device {candidate.device} != {reference.device}",
                             rule="device")
    if reference.dtype.is_floating_point:
        return _compare_floats(name, _flat(candidate), _flat(reference), tol)
    return _compare_exact(name, _flat(candidate), _flat(reference))


def _compare_exact(name: str, a_flat: torch.Tensor, r_flat: torch.Tensor) -> OutputVerdict:
    """Rule 2: element-for-element equality (NaN never equals itself)."""
    numel = r_flat.numel()
    wide = torch.complex128 if r_flat.dtype.is_complex else torch.float64
    mismatched, max_abs = 0, 0.0
    for start in range(0, numel, CHUNK):
        a, r = a_flat[start:start + CHUNK], r_flat[start:start + CHUNK]
        bad = a != r
        count = int(bad.sum())
        if count:
            mismatched += count
            diff = (a[bad].to(wide) - r[bad].to(wide)).abs()
            diff = diff[torch.isfinite(diff)]  # complex NaN has no distance
            max_abs = max(max_abs, float(diff.max()) if diff.numel() else 0.0)
    ratio = (numel - mismatched) / numel if numel else 1.0
    verdict = OutputVerdict(name, True, Status.PASSED, numel=numel, mismatched=mismatched,
                            matched_ratio=ratio, max_absolute_error=max_abs, rule="exact")
    if mismatched:
        verdict.passed, verdict.status = False, Status.INCORRECT_NUMERICAL
        verdict.reason = (f"{mismatched} of {numel} integer elements differ "
                          "(exact match required)")
    return verdict


def _close(a32: torch.Tensor, r32: torch.Tensor, tol: Tolerance, either: bool
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rule 4 on a widened chunk: (absolute error, relative error, which elements match)."""
    error = (a32 - r32).abs()
    scale = r32.abs()
    relative = error / (scale + REL_EPS)
    if either:
        close = (error <= tol.atol) | (relative <= tol.rtol)
    else:
        close = error <= tol.atol + tol.rtol * scale
    return error, relative, close


def missed(candidate: torch.Tensor, reference: torch.Tensor, tol: Tolerance) -> set[int]:
    """The flat positions (values, for packed FP4) of the floating ``candidate``'s
    elements outside ``tol`` by rule 4 (the shapes and dtypes already match)."""
    a_flat, r_flat = _flat(candidate), _flat(reference)
    either = tol.comparison == "absolute_or_relative"
    found: set[int] = set()
    offset = 0
    for start in range(0, r_flat.numel(), CHUNK):
        close = _close(_widen(a_flat[start:start + CHUNK]), _widen(r_flat[start:start + CHUNK]),
                       tol, either)[2]
        found.update((torch.nonzero(~close).flatten() + offset).tolist())
        offset += close.numel()
    return found


def _compare_floats(name: str, a_flat: torch.Tensor, r_flat: torch.Tensor,
                    tol: Tolerance) -> OutputVerdict:
    """Rules 3 and 4, chunk by chunk."""
    either = tol.comparison == "absolute_or_relative"
    numel = mismatched = non_finite = 0
    max_abs = max_rel = 0.0
    for start in range(0, r_flat.numel(), CHUNK):
        a, r = a_flat[start:start + CHUNK], r_flat[start:start + CHUNK]
        a32, r32 = _widen(a), _widen(r)
        error, relative, close = _close(a32, r32, tol, either)
        size = close.numel()
        numel += size
        mismatched += size - int(close.sum())
        if not size:
            continue
        largest, top = float(error.max()), float(relative.max())
        if not (math.isfinite(largest) and math.isfinite(top)):
            # NaN or inf on a side, or an FP32 overflow: the inputs are tested, and the
            # figures are taken over elements whose inputs are finite, in FP64 where FP32
            # overflowed (element by element, so the chunking changes no figure)
            finite = _finite(a, a32) & _finite(r, r32)
            non_finite += size - int(finite.sum())
            error64 = (a32.double() - r32.double()).abs()
            largest = _top(error, error64, finite)
            top = _top(relative, error64 / (r32.double().abs() + REL_EPS), finite)
        max_abs, max_rel = max(max_abs, largest), max(max_rel, top)
        del a32, r32, error, relative, close

    matched = numel - mismatched
    ratio, reached = ratio_reached(matched, numel, tol.required_matched_ratio)
    verdict = OutputVerdict(name, True, Status.PASSED, numel=numel, mismatched=mismatched,
                            matched_ratio=ratio, max_absolute_error=max_abs,
                            max_relative_error=max_rel, non_finite=non_finite,
                            rule="tolerance")
    if non_finite:
        verdict.passed, verdict.status, verdict.rule = False, Status.INCORRECT_NUMERICAL, "finite"
        verdict.reason = f"{non_finite} non-finite elements (candidate or reference)"
    elif not reached:
        required = 1.0 if tol.required_matched_ratio is None else tol.required_matched_ratio
        verdict.passed, verdict.status = False, Status.INCORRECT_NUMERICAL
        verdict.reason = (f"{mismatched} of {numel} elements outside tolerance (matched "
                          f"{matched}, ratio {ratio!r} < {required!r}); "
                          f"max abs err {max_abs:.3g}")
    return verdict


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

