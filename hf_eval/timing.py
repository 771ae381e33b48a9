"""Timing of one callable, in the spirit of ``triton.testing.do_bench``.

On CUDA a trial is ``iters`` back-to-back calls between two events, with every stream of
the device synchronised before the start and after the end so work left on a side stream
is counted; the per-call time is the trial's time divided by ``iters``. On CPU a trial is
timed with ``time.perf_counter``. The timer functions are bound when this module is
imported, before any candidate code runs, so a candidate cannot patch them afterwards.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize


@dataclass
class Timing:
    """Per-call milliseconds over trials."""

    median_ms: float
    min_ms: float
    max_ms: float
    trials: int
    iters: int

    def to_json(self) -> dict:
        return asdict(self)


def summarise(per_call_ms: list[float], iters: int) -> Timing:
    return Timing(statistics.median(per_call_ms), min(per_call_ms), max(per_call_ms),
                  len(per_call_ms), iters)


def time_calls(fn: Callable[[], object], *, device: torch.device, warmup: int, iters: int,
               trials: int, before_trial: Callable[[], None] | None = None) -> Timing:
    """Time ``fn()``; ``before_trial`` runs outside the timed region (e.g. an L2 flush)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(trials):
        if before_trial is not None:
            before_trial()
        if device.type == "cuda":
            _synchronize(device)
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            _synchronize(device)
            samples.append(start.elapsed_time(end) / iters)
        else:
            t0 = _perf_counter()
            for _ in range(iters):
                fn()
            samples.append((_perf_counter() - t0) * 1e3 / iters)
    return summarise(samples, iters)
