"""Audit reports: one JSON line per case, flushed as it completes, and a readable table."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import IO

import torch
from rich.console import Console
from rich.table import Table


def environment(device: torch.device) -> dict:
    """What a reader needs to reproduce or compare a timing."""
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "platform": platform.platform(), "cpu_count": os.cpu_count(), "device": str(device)}
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda
    try:
        env["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                           text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        env["git_commit"] = None
    return env


class ReportWriter:
    """Appends one JSON object per line and flushes it, so a crash loses nothing."""

    def __init__(self, path: str | Path, append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a" if append else "w")

    def write(self, record: dict) -> None:
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def read_report(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary_table(records: list[dict]) -> Table:
    """Per definition and solution: cases passed, median eager time, failures."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for rec in records:
        groups[(rec["definition"], rec["solution"])].append(rec)
    table = Table(title="Audit summary", show_lines=False)
    for col in ("definition", "solution", "passed", "eager ms (geomean)", "failures"):
        numeric = col in ("passed", "eager ms (geomean)")
        table.add_column(col, justify="right" if numeric else "left", no_wrap=not numeric,
                         overflow="fold")
    for (definition, solution), recs in sorted(groups.items()):
        passed = sum(r["status"] == "PASSED" for r in recs)
        medians = [r["timing"]["eager"]["median_ms"] for r in recs
                   if r.get("timing", {}).get("eager")]
        failures = sorted({r["status"] for r in recs if r["status"] != "PASSED"})
        style = "green" if passed == len(recs) else "red"
        table.add_row(definition, solution, f"[{style}]{passed}/{len(recs)}[/]",
                      f"{geomean(medians):.3f}" if medians else "-", ", ".join(failures))
    return table


def print_summary(records: list[dict], console: Console | None = None) -> None:
    """Print the table wide enough for full definition names, even when piped to a file."""
    console = console or Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(summary_table(records))
