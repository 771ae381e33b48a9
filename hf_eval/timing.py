"""Timing of one callable, in the spirit of ``triton.testing.do_bench``.

Eager: a trial is ``iters`` back-to-back calls; on CUDA between two events with every
stream of the device synchronised before the start and after the end (so work left on a
side stream is counted), on CPU with ``time.perf_counter``. CUDA graph: ``iters`` calls
are captured into one graph and each replay is a trial. The per-call time is the trial's
time divided by ``iters``; the median, min and max over trials are reported.

The timer functions are bound when this module is imported, which the audit's worker
does before any candidate code loads; the worker checks them unchanged afterwards.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

_perf_counter = time.perf_counter
_median = statistics.median
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
    return Timing(_median(per_call_ms), min(per_call_ms), max(per_call_ms), len(per_call_ms),
                  iters)


def l2_flusher(device: torch.device) -> Callable[[], None] | None:
    """Overwrite a buffer twice the L2 size (run outside the timed region: a cold L2)."""
    if device.type != "cuda":
        return None
    size = 2 * torch.cuda.get_device_properties(device).L2_cache_size
    buffer = torch.empty(max(size, 1 << 20), dtype=torch.uint8, device=device)
    return lambda: buffer.fill_(1)


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


def time_graph(fn: Callable[[], object], *, device: torch.device, warmup: int, iters: int,
               trials: int, before_trial: Callable[[], None] | None = None
               ) -> tuple[Timing, object]:
    """CUDA-graph timing: ``iters`` calls captured once, each replay a trial.

    Returns the timing and what the last captured call returned (the graph's output
    buffers, which the caller re-checks after the replays).
    """
    stream = torch.cuda.Stream(device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm up outside capture (allocator, lazy init, autotuning)
            fn()
    torch.cuda.current_stream(device).wait_stream(stream)
    _synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(iters):
            produced = fn()
    for _ in range(max(1, warmup // max(1, iters))):
        graph.replay()
    samples = []
    for _ in range(trials):
        if before_trial is not None:
            before_trial()
        samples.append(_elapsed_ms(graph.replay, device) / iters)
    return summarise(samples, iters), produced
