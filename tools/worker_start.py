"""The cost of one worker's walls: wall time and machine CPU time to start one contained,
confined worker and to end it.

    .venv/bin/python tools/worker_start.py [fork|exec] [--workers N]

A worker here is the stand-in (no candidate code), started with every wall applied, asked
to load (``{"op": "load", "stand_in": True}``) and so ready for a request; then closed
(its namespaces and groups ended, its uid reaped, its private directory removed). One
warm-up worker first, so that the fork server's own start (once per audit) is not
counted. Prints the median and minimum start, the median end, and the CPU-seconds the
whole machine spent per worker (``/proc/stat``: run it on a quiet machine). Works on a
checkout whose boundary is ``hf_eval.executor`` as well (an older layout), so the same
script compares two commits.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

try:
    import hf_eval.isolation.workers as workers
except ImportError:  # an older checkout
    import hf_eval.executor as workers


def _busy_seconds() -> float:
    """CPU-seconds every core of the machine has spent not idle since boot."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("method", nargs="?", default="fork", choices=("fork", "exec"))
    parser.add_argument("--workers", type=int, default=10)
    args = parser.parse_args()
    workers.START_METHOD = args.method
    workers.WorkerHandle(None, torch.device("cpu")).close()  # the fork server starts here
    starts, ends = [], []
    busy = _busy_seconds()
    for _ in range(args.workers):
        begin = time.perf_counter()
        handle = workers.WorkerHandle(None, torch.device("cpu"))
        handle.request({"op": "load", "stand_in": True, "device": "cpu"}, 120)
        starts.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        handle.close()
        ends.append(time.perf_counter() - begin)
    cpu = (_busy_seconds() - busy) / args.workers
    print(f"{args.method}: start median {statistics.median(starts):.3f} s, min "
          f"{min(starts):.3f} s; end median {statistics.median(ends):.3f} s; "
          f"machine CPU {cpu:.3f} s per worker ({args.workers} workers)")


if __name__ == "__main__":
    main()
