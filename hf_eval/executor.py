"""The audit's side of candidate isolation: one spawned worker per solution at a time.

A worker is started for a solution, loads it once, and serves its cases. Each request has
a deadline; a worker that misses it is killed (TIMEOUT), one that dies is reported with its
exit signal (RUNTIME_ERROR), and after any fatal reply the next case gets a fresh worker.
Inputs are shared with the worker (shared memory on CPU, CUDA IPC on GPU) so the parent can
byte-check them itself after every request; outputs come back as CPU copies.
"""

from __future__ import annotations

import fcntl
import secrets
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.multiprocessing as mp

from hf_eval import worker as worker_module
from hf_eval.modules import solution_hash
from hf_eval.schema import Solution

LOAD_TIMEOUT_S = 120.0


class WorkerFailure(Exception):
    """The worker could not answer: timeout, crash or a forged reply."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class WorkerHandle:
    """A spawned worker process and its private pipe."""

    def __init__(self, solution: Solution) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=worker_module.main, args=(child,), daemon=True,
                                   name=f"hf_eval-worker-{solution.name}")
        self.process.start()
        child.close()
        self.solution_key = solution_hash(solution)

    def request(self, message: dict, timeout: float) -> dict:
        nonce = secrets.token_hex(16)
        try:
            self.conn.send({**message, "nonce": nonce})
        except (BrokenPipeError, OSError) as exc:
            raise WorkerFailure("RUNTIME_ERROR",
                                self._death(f"worker unreachable ({exc})")) from None
        if not self.conn.poll(timeout):
            self.kill()
            raise WorkerFailure("TIMEOUT", f"no answer within {timeout:.0f} s")
        try:
            reply = self.conn.recv()
        except (EOFError, OSError):
            raise WorkerFailure("RUNTIME_ERROR", self._death("worker process died")) from None
        if not isinstance(reply, dict) or reply.get("nonce") != nonce:
            self.kill()
            raise WorkerFailure("RUNTIME_ERROR", "result channel tampering: a reply without "
                                "the request's nonce")
        if self.conn.poll(0):
            self.kill()
            raise WorkerFailure("RUNTIME_ERROR", "result channel tampering: unrequested "
                                "messages on the result pipe")
        return reply

    def _death(self, what: str) -> str:
        self.process.join(5)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"{what}: killed by {signal.Signals(-code).name}"
        return f"{what} (exit code {code})"

    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(10)

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send({"op": "exit", "nonce": ""})
                self.process.join(10)
            except (BrokenPipeError, OSError):
                pass
        self.kill()
        self.conn.close()


@contextmanager
def gpu_lock(device: torch.device):
    """An exclusive lock per GPU, so two audits never time on one GPU at once."""
    if device.type != "cuda":
        yield
        return
    index = device.index if device.index is not None else torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", index))
    path = Path(tempfile.gettempdir()) / f"hf_eval-gpu-{uuid}.lock"
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class Isolation:
    """At most one live worker per solution; a worker is replaced after any fatal failure.

    Workers stay up while the audit moves between workloads of one definition (starting
    one costs an interpreter, a torch import and, on GPU, a CUDA context) and are shut
    down by :meth:`shutdown` when the audit moves on to another definition.
    """

    def __init__(self) -> None:
        self.workers: dict[str, tuple[WorkerHandle, dict]] = {}

    def worker(self, solution: Solution, timeout: float) -> tuple[WorkerHandle, dict]:
        key = solution_hash(solution)
        found = self.workers.get(key)
        if found is None or not found[0].alive():
            handle = WorkerHandle(solution)
            self.workers[key] = (handle, {"status": "RUNTIME_ERROR", "reason": "not loaded"})
            # Starting the interpreter and importing the solution (which may JIT-compile
            # kernels) gets at least LOAD_TIMEOUT_S, whatever the per-call timeout.
            reply = handle.request({"op": "load", "solution": solution.model_dump_json()},
                                   max(timeout, LOAD_TIMEOUT_S))
            self.workers[key] = (handle, reply)
        return self.workers[key]

    def discard(self, solution_key: str) -> None:
        """Drop a solution's worker (after a timeout, crash or fatal error)."""
        found = self.workers.pop(solution_key, None)
        if found is not None:
            found[0].kill()
            found[0].conn.close()

    def shutdown(self) -> None:
        for handle, _ in self.workers.values():
            handle.close()
        self.workers.clear()
