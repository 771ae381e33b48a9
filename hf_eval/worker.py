"""The candidate's side of the audit: a spawned process that loads one solution and runs it.

Everything here runs in the same process as untrusted candidate code, so the functions the
harness relies on (timers, synchronisation, the result channel, tensor introspection) are
bound when this module is imported, before any candidate code loads, and checked unchanged
after every request. The parent never parses this process's stdout: requests and results
travel over a private pipe, each result tagged with its request's nonce.

Outputs leave as CPU copies; the parent compares them against a reference it computed in
its own process, so the candidate never shares an address space with a reference output.
"""

from __future__ import annotations

import multiprocessing.connection
import statistics
import time
import traceback

import torch

from hf_eval import timing
from hf_eval.modules import Entry, load_entry
from hf_eval.schema import Solution

# Bound before any candidate code runs (hf_eval.timing binds its own); see
# _integrity_problems.
_synchronize = torch.cuda.synchronize
_untyped_storage = torch.Tensor.untyped_storage

GUARDED = [
    (time, "perf_counter"), (time, "perf_counter_ns"), (time, "monotonic"),
    (statistics, "median"), (torch, "equal"),
    (torch.cuda, "synchronize"), (torch.cuda, "graph"), (torch.cuda.Event, "record"),
    (torch.cuda.Event, "elapsed_time"), (torch.cuda.Event, "synchronize"),
    (torch.cuda.CUDAGraph, "replay"), (torch.cuda.Stream, "synchronize"),
    (torch.Tensor, "data_ptr"), (torch.Tensor, "untyped_storage"), (torch.Tensor, "cpu"),
    (torch.Tensor, "clone"), (torch.Tensor, "detach"), (torch.Tensor, "copy_"),
    (multiprocessing.connection.Connection, "send"),
    (multiprocessing.connection.Connection, "recv"),
    (multiprocessing.connection.Connection, "send_bytes"),
    (multiprocessing.connection.Connection, "poll"),
]
_ORIGINALS = [(owner, name, owner.__dict__.get(name, getattr(owner, name)))
              for owner, name in GUARDED]


def _integrity_problems() -> list[str]:
    """Names of harness functions that candidate code replaced."""
    return [f"{getattr(owner, '__name__', owner)}.{name}"
            for owner, name, original in _ORIGINALS
            if owner.__dict__.get(name, getattr(owner, name, None)) is not original]


def _storage_span(t: torch.Tensor) -> tuple[int, int, str]:
    storage = _untyped_storage(t)
    start = storage.data_ptr()
    return start, start + storage.nbytes(), str(t.device)


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    return a[2] == b[2] and a[0] < b[1] and b[0] < a[1] and a[0] != a[1] and b[0] != b[1]


class OutputError(Exception):
    """An output that is not a fresh, plain, dense tensor."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class Worker:
    def __init__(self, conn: multiprocessing.connection.Connection) -> None:
        self.conn = conn
        self.entry: Entry | None = None
        self.earlier_outputs: list[torch.Tensor] = []  # kept alive so addresses stay unique

    # ----------------------------------------------------------------- outputs
    def _collect(self, produced: object, inputs: list[object], n_outputs: int,
                 when: str) -> list[dict]:
        """Check what the candidate returned and copy it out (as CPU tensors)."""
        outputs = produced if isinstance(produced, (tuple, list)) else (produced,)
        if len(outputs) != n_outputs:
            raise OutputError("INCORRECT_SHAPE", f"{when}: returned {len(outputs)} outputs, "
                              f"the definition has {n_outputs}")
        input_spans = [(i, _storage_span(t)) for i, t in enumerate(inputs)
                       if isinstance(t, torch.Tensor)]
        earlier = [_storage_span(t) for t in self.earlier_outputs]
        spans = []
        collected = []
        for index, out in enumerate(outputs):
            if type(out) is not torch.Tensor:
                raise OutputError("INCORRECT_DTYPE", f"{when}: output {index} is "
                                  f"{type(out).__name__}, not a plain torch.Tensor")
            if out.layout != torch.strided or out.is_meta or out.requires_grad:
                raise OutputError("INCORRECT_DTYPE", f"{when}: output {index} must be a dense, "
                                  "materialised tensor without autograd history")
            span = _storage_span(out)
            for i, other in input_spans:
                if _overlaps(span, other):
                    raise OutputError("INCORRECT_NUMERICAL",
                                      f"{when}: output {index} aliases input {i}")
            if any(_overlaps(span, other) for other in earlier):
                raise OutputError("INCORRECT_NUMERICAL", f"{when}: output {index} aliases an "
                                  "output of an earlier call (a cached result)")
            if any(_overlaps(span, other) for other in spans):
                raise OutputError("INCORRECT_NUMERICAL",
                                  f"{when}: output {index} aliases another output")
            spans.append(span)
            collected.append({"device": str(out.device), "tensor": out.detach().cpu().clone()})
        self.earlier_outputs.extend(outputs)
        return collected

    # ----------------------------------------------------------------- requests
    def load(self, request: dict) -> dict:
        solution = Solution.model_validate_json(request["solution"])
        try:
            self.entry = load_entry(solution)
        except Exception as exc:
            return {"status": "COMPILE_ERROR", "reason": _one_line(exc),
                    "traceback": traceback.format_exc(limit=-5)}
        return {"status": "OK"}

    def call(self, request: dict) -> dict:
        if request.get("new_case"):
            self.earlier_outputs.clear()
        inputs = request["inputs"]
        produced = self.entry.run(*inputs)
        self._sync(request)
        return {"status": "OK", "outputs": self._collect(produced, inputs, request["n_outputs"],
                                                         request.get("when", "call"))}

    def time(self, request: dict) -> dict:
        """Eager, prepared and CUDA-graph timing; returns the last outputs of each method."""
        inputs, spec, device = request["inputs"], request["timing"], torch.device(request["device"])
        n_outputs = request["n_outputs"]
        flush = timing.l2_flusher(device) if request.get("cold_l2") else None
        timings, outputs = {}, {}
        call = lambda: self.entry.run(*inputs)  # noqa: E731
        timings["eager"] = timing.time_calls(call, device=device, **spec,
                                             before_trial=flush).to_json()
        outputs["eager"] = self._collect(call(), inputs, n_outputs, "after eager timing")
        if self.entry.prepare is not None:
            launch = self.entry.prepare(*inputs)
            timings["prepared"] = timing.time_calls(launch, device=device, **spec,
                                                    before_trial=flush).to_json()
            outputs["prepared"] = self._collect(launch(), inputs, n_outputs,
                                                "after prepared timing")
        if device.type == "cuda" and request.get("graph", True):
            fn = launch if self.entry.prepare is not None else call
            try:
                graph, produced = timing.time_graph(fn, device=device, **spec,
                                                    before_trial=flush)
                timings["graph"] = graph.to_json()
                outputs["graph"] = self._collect(produced, inputs, n_outputs, "graph replay")
            except OutputError:
                raise
            except Exception as exc:  # reported apart from numerical failures
                timings["graph"] = {"error": _one_line(exc)}
        return {"status": "OK", "timing": timings, "outputs": outputs}

    @staticmethod
    def _sync(request: dict) -> None:
        if request["device"].startswith("cuda"):
            _synchronize()

    def serve(self) -> None:
        handlers = {"load": self.load, "call": self.call, "time": self.time}
        while True:
            request = self.conn.recv()
            if request["op"] == "exit":
                return
            try:
                reply = handlers[request["op"]](request)
            except OutputError as exc:
                reply = {"status": exc.status, "reason": str(exc)}
            except torch.OutOfMemoryError as exc:
                reply = {"status": "RUNTIME_ERROR", "reason": f"out of memory: {_one_line(exc)}",
                         "fatal": True}
            except Exception as exc:
                reply = {"status": "RUNTIME_ERROR", "reason": _one_line(exc),
                         "traceback": traceback.format_exc(limit=-5), "fatal": True}
            tampered = _integrity_problems()
            if tampered:
                reply = {"status": "RUNTIME_ERROR", "fatal": True,
                         "reason": "harness integrity: candidate code replaced "
                                   + ", ".join(tampered)}
            reply["nonce"] = request["nonce"]
            self.conn.send(reply)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def main(conn: multiprocessing.connection.Connection) -> None:
    """Entry point of the spawned process."""
    Worker(conn).serve()
