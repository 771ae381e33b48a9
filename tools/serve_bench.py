"""The agent loop's speed: seconds per ``POST /audit`` of ``hf-eval serve``, cold and warm.

    .venv/bin/python tools/serve_bench.py [--device cpu|cuda] [--definition NAME]
                                               [--solution NAME] [--warm 3] [--keep-cache]

Starts ``hf-eval serve`` on this checkout (``--port 0``, a report in a temporary
directory), then sends ``--solution`` or the definition's task's preferred solution for
the device (for the default, dense attention d64 on CPU: ``torch_sdpa_dense_h32_d64``;
on CUDA give ``--solution torch_sdpa_dense_h32_d64``: the preferred one needs
FlashAttention 4) on the ``dev`` suite:
once cold (the first request of a server just started: the definition's tensors read and
verified, its references computed) and ``--warm`` times warm. Before each request it
waits until the server is idle with its spare worker started (as when an agent writes
its next candidate in between; the waits are printed); ``--back-to-back`` sends each
request as soon as the last answer ends. Every request is a new
solution to the server: renamed, and its ``main.py`` given a comment of its own so that
its content hash is new too. Seconds are the client's, from sending the request to the
last line of the answer. By default the server gets an empty harness cache (references
and verified hashes: a true cold start); ``--keep-cache`` uses ``$HF_EVAL_CACHE``.

Prints one JSON line: the server's start, the cold and each warm request's seconds, their
median, the server's own count per request, and every case's status. Exits 1 if a case
did not pass or the server did not stop cleanly on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DEFINITION = "noncausal_dense_attention_h32_d64"


def preferred_solution(definition: str, device: str, name: str | None = None) -> dict:
    """The solution ``name``, else the task's preferred solution for ``device`` (the CPU
    pick, or the GPU's), as JSON."""
    import torch

    from hf_eval.judge.audit import hardware_key

    task = json.loads((REPO / "tasks" / f"{definition}.json").read_text())
    pick = task["preferred"].get(hardware_key(torch.device(device))) or task["preferred"]["cpu"]
    name = name or pick["solution"]
    for path in (REPO / "solutions").rglob("*.json"):
        data = json.loads(path.read_text())
        if data.get("name") == name:
            return data
    raise SystemExit(f"solution {name} not found under solutions/")


def renamed(solution: dict, tag: str) -> dict:
    """``solution`` as a new one: its name and its entry file's content changed."""
    entry = solution["spec"]["entry_point"].split("::")[0]
    sources = [{**s, "content": s["content"] + f"\n# serve_bench {tag}\n"}
               if s["path"] == entry else s for s in solution["sources"]]
    return {**solution, "name": f"{solution['name']}-bench-{tag}", "sources": sources}


def wait_until_ready(url: str, limit_s: float = 120.0) -> float:
    """Seconds until the server is idle with a spare worker ready (``GET /health``): where
    an agent writes its next candidate between two requests, this is the state its next
    request finds."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        with urllib.request.urlopen(f"{url}/health", timeout=10) as answer:
            health = json.loads(answer.read())
        if health.get("spare_worker") and not health.get("busy") and not health.get("queued"):
            break
        time.sleep(0.1)
    return time.perf_counter() - started


def post(url: str, body: dict) -> tuple[float, list[dict]]:
    """Send one audit request; the client's seconds to the last line, and the lines."""
    data = json.dumps(body).encode()
    started = time.perf_counter()
    request = urllib.request.Request(f"{url}/audit", data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=1800) as answer:
        lines = [json.loads(line) for line in answer]
    return time.perf_counter() - started, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    parser.add_argument("--definition", default=DEFAULT_DEFINITION)
    parser.add_argument("--solution", default=None,
                        help="a solution of the definition (default: the task's preferred)")
    parser.add_argument("--warm", type=int, default=3, help="warm requests after the cold one")
    parser.add_argument("--keep-cache", action="store_true",
                        help="use $HF_EVAL_CACHE instead of an empty cache")
    parser.add_argument("--back-to-back", action="store_true",
                        help="send each request as soon as the last answer ends, without "
                             "waiting for the server's spare worker")
    args = parser.parse_args()
    solution = preferred_solution(args.definition, args.device, args.solution)
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
        if not args.keep_cache:
            env["HF_EVAL_CACHE"] = str(Path(tmp) / "cache")
        report = Path(tmp) / "serve.jsonl"
        started = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-m", "hf_eval", "--root", str(REPO), "serve", "--port", "0",
             "--device", args.device, "--report", str(report)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        try:
            ready = server.stdout.readline()
            if not ready.startswith("serving on "):
                raise SystemExit(f"the server did not start: {ready!r}")
            start_s = time.perf_counter() - started
            url = ready.split()[2]
            runs, waits = [], []
            for _ in range(1 + args.warm):
                if not args.back_to_back:
                    waits.append(round(wait_until_ready(url), 3))
                body = {"definition": args.definition,
                        "solution": renamed(solution, secrets.token_hex(4))}
                seconds, lines = post(url, body)
                runs.append((seconds, lines))
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=300)
        written = sum(1 for line in report.read_text().splitlines() if line.strip())
    done = [lines[-1] for _, lines in runs]
    statuses = [r["status"] for _, lines in runs for r in lines[:-1]]
    warm = [round(s, 3) for s, _ in runs[1:]]
    print(json.dumps({
        "definition": args.definition, "solution": solution["name"], "device": args.device,
        "suite": "dev", "cases_per_request": done[0]["cases"],
        "server_start_s": round(start_s, 3), "back_to_back": args.back_to_back,
        "ready_waits_s": waits, "cold_s": round(runs[0][0], 3),
        "warm_s": warm, "warm_median_s": statistics.median(warm) if warm else None,
        "server_seconds": [d["seconds"] for d in done], "statuses": sorted(set(statuses)),
        "report_lines": written, "server_exit": code,
        # where the last request's seconds went, case by case
        "last_cases": [{"wall_s": r.get("wall_seconds"), "setup_ms": r.get("setup_ms"),
                        "methods": sorted(r.get("timing", {}))}
                       for r in runs[-1][1][:-1]]}))
    passed = all(s == "PASSED" for s in statuses) and not any("error" in d for d in done)
    return 0 if passed and code == 0 and written == len(statuses) else 1


if __name__ == "__main__":
    sys.exit(main())
