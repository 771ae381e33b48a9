"""Where one ``hf-eval serve`` request's seconds go: the service's audit, in this process.

    .venv/bin/python tools/serve_phases.py [--device cpu|cuda] [--definition NAME]
                                                [--solution NAME] [--requests 3]

Builds the service (:class:`hf_eval.judge.serve.AuditService`) in this process, as ``hf-eval
serve`` does, and judges ``--requests`` new solutions (the definition's task's preferred
solution, or ``--solution``, renamed and with a new content hash each time, as
``serve_bench.py`` sends them) on the ``dev`` suite, one after another, with no HTTP in
between, each after the service has started its spare worker (timed apart, as
``spare_after_s``). For each request it prints one JSON line: the seconds, and the seconds spent
in each phase the audit passes through (starting a worker, each request kind sent to a
worker, the stand-in's runs and the waits before them, input sets drawn, references
computed, outputs judged), counted on the audit's clock, nested phases counted in
each. With ``--profile`` it also prints the last request's 30 costliest functions by
cumulative time (``cProfile``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import secrets
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from serve_bench import DEFAULT_DEFINITION, preferred_solution, renamed  # noqa: E402

SECONDS: dict[str, float] = defaultdict(float)
COUNTS: dict[str, int] = defaultdict(int)


def clocked(owner: type, name: str, label=None) -> None:
    """Count the time spent in ``owner.name`` under ``label`` (a string, or a function of
    the call's arguments)."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        key = label(*args, **kwargs) if callable(label) else (label or name)
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SECONDS[key] += time.perf_counter() - t0
            COUNTS[key] += 1

    setattr(owner, name, wrapper)


def instrument() -> None:
    from hf_eval.isolation import workers
    from hf_eval.judge import audit, trials

    clocked(workers.WorkerHandle, "__init__", "worker start")
    clocked(workers.WorkerHandle, "close", "worker end")
    clocked(workers.WorkerHandle, "request",
            lambda self, message, timeout: f"request {message.get('op')}"
            + (" (stand-in)" if self.solution_key == "stand-in" else ""))
    clocked(trials.Session, "_as_after_a_switch", "stand-in: idle and GPU-free wait")
    clocked(trials.Session, "fresh", "fresh input set drawn")
    clocked(trials.Session, "fresh_many", "fresh input sets drawn at once")
    truth = trials.InputSet.reference.fget

    def reference(self):
        t0 = time.perf_counter()
        try:
            return truth(self)
        finally:
            SECONDS["truth of a set (computed or kept)"] += time.perf_counter() - t0

    trials.InputSet.reference = property(reference)
    clocked(trials.Session, "_judge", "outputs judged")
    clocked(trials.Session, "_write", "arena masked and written")
    clocked(trials.Session, "_trial", lambda self, method, sets, when, **kw:
            f"trial {method}{' timed' if kw.get('timed') else ''}"
            f"{' cold' if kw.get('cold') else ''}{' profiled' if kw.get('profile') else ''}")
    clocked(trials.Session, "time_graph", "time_graph")
    clocked(trials.Session, "time", "time (eager)")
    clocked(audit.Lane, "prepare_case", "case prepared")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--definition", default=DEFAULT_DEFINITION)
    parser.add_argument("--solution", default=None)
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    instrument()
    from hf_eval.judge.serve import AuditService

    solution = preferred_solution(args.definition, args.device, args.solution)
    with tempfile.TemporaryDirectory(prefix="serve-phases-") as tmp:
        t0 = time.perf_counter()
        service = AuditService(REPO, args.device, Path(tmp) / "serve.jsonl")
        service.start()  # the stand-in, the first spare worker, the audit thread
        print(json.dumps({"service_start_s": round(time.perf_counter() - t0, 3),
                          "phases_s": {k: round(v, 4) for k, v in sorted(SECONDS.items())}}))
        profiler = None
        try:
            for index in range(args.requests):
                SECONDS.clear()
                COUNTS.clear()
                body = json.dumps({"definition": args.definition,
                                   "solution": renamed(solution, secrets.token_hex(4))})
                job = service.accept(body.encode())
                last = index == args.requests - 1
                if last and args.profile:
                    profiler = cProfile.Profile()
                    profiler.enable()
                t0 = time.perf_counter()
                service._judge(job)
                seconds = time.perf_counter() - t0
                if profiler is not None:
                    profiler.disable()
                t0 = time.perf_counter()
                service._spare()  # between requests, as the service's audit thread does
                spare_s = time.perf_counter() - t0
                lines = []
                while not job.lines.empty():
                    lines.append(json.loads(job.lines.get()[1]))
                print(json.dumps({
                    "request": index, "seconds": round(seconds, 3),
                    "spare_after_s": round(spare_s, 3),
                    "statuses": [r.get("status") for r in lines[:-1]],
                    "cases_wall_s": [r.get("wall_seconds") for r in lines[:-1]],
                    "phases_s": {k: round(v, 4) for k, v in
                                 sorted(SECONDS.items(), key=lambda kv: -kv[1])},
                    "counts": dict(sorted(COUNTS.items()))}))
        finally:
            service.close()
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
