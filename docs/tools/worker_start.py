"""Wall time to start one confined worker and to end it, for issue 11's cost goal.

    .venv/bin/python docs/tools/worker_start.py fork   # the fork server (the default)
    .venv/bin/python docs/tools/worker_start.py exec   # a fresh interpreter per worker

A worker here is the stand-in (no candidate code), started with the walls applied, asked
to load (``{"op": "load", "stand_in": True}``) and so ready for a request; then closed
(killed, its uid reaped, its private directory removed). One warm-up worker first, so that
the fork server's own start (once per audit) is not counted. Prints the median and the
minimum of five starts, and the median end.
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

import hf_eval.isolation.workers as executor


def main(method: str) -> None:
    executor.START_METHOD = method
    executor.WorkerHandle(None, torch.device("cpu")).close()  # the fork server starts here
    starts, ends = [], []
    for _ in range(5):
        begin = time.perf_counter()
        handle = executor.WorkerHandle(None, torch.device("cpu"))
        handle.request({"op": "load", "stand_in": True, "device": "cpu"}, 120)
        starts.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        handle.close()
        ends.append(time.perf_counter() - begin)
    print(f"{method}: start median {statistics.median(starts):.3f} s, min {min(starts):.3f} s;"
          f" end median {statistics.median(ends):.3f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fork")
