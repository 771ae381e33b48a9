"""In-process timing of the harness's own code (the roofline's ceilings), in the spirit of
``triton.testing.do_bench``: a trial is ``iters`` back-to-back calls, between two CUDA
events with every stream of the device synchronised before and after (on CPU,
``time.perf_counter``); the median, min and max per call over trials are reported.

Candidates are never timed here: they run in a confined worker and are timed on the
audit's own clock (:mod:`hf_eval.judge.trials`, docs/verdicts.md).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch

_perf_counter = time.perf_counter
_median = statistics.median
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize


@dataclass
class Timing:
    """Per-call times over trials."""

    median_ms: float
    """The median per-call time over trials, in milliseconds."""
    min_ms: float
    """The fastest trial's per-call time, in milliseconds."""
    max_ms: float
    """The slowest trial's per-call time, in milliseconds."""
    trials: int
    """Trials timed."""
    iters: int
    """Back-to-back calls per trial."""
    median_us: float = field(init=False)
    """``median_ms`` in microseconds, the published report's unit."""

    def __post_init__(self) -> None:
        self.median_us = self.median_ms * 1000

    def to_json(self) -> dict:
        return asdict(self)


def summarise(per_call_ms: list[float], iters: int) -> Timing:
    return Timing(_median(per_call_ms), min(per_call_ms), max(per_call_ms), len(per_call_ms),
                  iters)


def _elapsed_ms(run: Callable[[], None], device: torch.device) -> float:
    if device.type == "cuda":
        _synchronize(device)  # every stream, so side-stream work is inside the region
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        start.record()
        run()
        end.record()
        _synchronize(device)
        return start.elapsed_time(end)
    t0 = _perf_counter()
    run()
    return (_perf_counter() - t0) * 1e3


def time_calls(fn: Callable[[], object], *, device: torch.device, warmup: int, iters: int,
               trials: int, before_trial: Callable[[], None] | None = None) -> Timing:
    """Eager timing of ``fn()``; ``before_trial`` runs outside the timed region."""
    for _ in range(warmup):
        fn()

    def trial() -> None:
        for _ in range(iters):
            fn()

    samples = []
    for _ in range(trials):
        if before_trial is not None:
            before_trial()
        samples.append(_elapsed_ms(trial, device) / iters)
    return summarise(samples, iters)
