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
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hf_eval.errors import DataError


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


def _parse_report(path: str | Path) -> tuple[list[dict], int | None, bool]:
    """(records, line number of a torn last line or None, whether the file ends in a newline).

    A torn last line is what an interrupted write leaves: the file's final line, with no
    newline after it, that is not a complete JSON object. Any other malformed line is an
    error naming the file and the line; a missing file is an error naming the file.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise DataError(path, "report not found") from None
    except IsADirectoryError:
        raise DataError(path, "is a directory, not a JSONL report") from None
    lines = text.split("\n")
    records, torn = [], None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        last = number == len(lines)  # after the final newline: not terminated
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            if last:
                torn = number
                break
            raise DataError(path, f"malformed JSON: {exc.msg} (only a torn last line, left "
                            "by an interrupted write, is skipped)", line=number) from None
        if not isinstance(record, dict):
            raise DataError(path, "not a JSON object (one audit record per line)", line=number)
        records.append(record)
    return records, torn, text.endswith("\n") or not text


def read_report(path: str | Path) -> list[dict]:
    """Every record of a report; a missing file, a malformed or torn line is a DataError."""
    records, torn, _ = _parse_report(path)
    if torn is not None:
        raise DataError(path, "torn last line (an interrupted write); `audit --resume` "
                        "drops it and audits that case again", line=torn)
    return records


def read_report_tolerant(path: str | Path) -> tuple[list[dict], str | None]:
    """Records and a note: exactly a torn last line is left out (and said so), not an error.

    For readers of a report that may still be written or was interrupted (``summarize``).
    """
    records, torn, _ = _parse_report(path)
    note = (f"{path}:{torn}: ignored a torn last line (an interrupted write); that case is "
            "not summarized") if torn is not None else None
    return records, note


def repair_for_resume(path: str | Path) -> str | None:
    """Make a report safe to append to; return a note when something was dropped.

    ``--resume`` recovers from what an interrupted audit leaves: a torn last line is cut
    off (its case is then audited again), and a complete last line without its newline
    gets one, so the next record does not run into it. A malformed line before the last
    is an error (``_parse_report``): that is damage, not an interruption.
    """
    path = Path(path)
    if not path.is_file():
        return None
    _, torn, terminated = _parse_report(path)
    if torn is None:
        if not terminated:
            with open(path, "a") as fh:
                fh.write("\n")
        return None
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1  # the torn line is the last, unterminated one
    with open(path, "r+b") as fh:
        fh.truncate(keep)
    return (f"{path}:{torn}: dropped a torn last line (an interrupted write); that case is "
            "audited again")


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


#: Columns beside the name: (header, width). The name column takes what is left.
_COLUMNS = (("passed", 7), ("eager ms", 9), ("failed", 15))
#: What the frame adds to the column widths: 3 characters (padding and rule) per gap.
_OVERHEAD = 3 * len(_COLUMNS)
#: The name column never gets narrower than this, whatever the terminal.
_MIN_NAME = 20
#: At most this many failed cases are listed under the table; the report has them all.
MAX_LISTED = 20


def wrap_name(name: str, width: int, indent: str = "") -> list[str]:
    """``name`` in lines of at most ``width``, broken only after an underscore.

    Names are identifiers a reader copies, so they are never cut inside a component and
    never shortened: joining the lines (without the indent) gives the name back. A single
    component longer than ``width`` gets a line of its own, over-long, rather than cut.
    """
    parts = [p + "_" for p in name.split("_")]
    parts[-1] = parts[-1][:-1]
    lines, line = [], ""
    for part in parts:
        if line and len(indent) + len(line) + len(part) > width:
            lines.append(indent + line)
            line = ""
        line += part
    lines.append(indent + line)
    return lines


def _short(status: str) -> str:
    """A status as the table shows it (its first distinguishing word, at most 9 letters
    for every status the runner has): ``INCORRECT_NUMERICAL`` -> ``NUMERICAL``,
    ``RUNTIME_ERROR`` -> ``RUNTIME``, ``TIMING_MISMATCH`` -> ``TIMING``. The list under
    the table and the report give the full status."""
    return status.removeprefix("INCORRECT_").removesuffix("_ERROR").split("_")[0]


def summary_table(records: list[dict], width: int = 80) -> Table:
    """Per definition and solution: cases passed, geomean eager time, failed statuses.

    Fits ``width`` columns: each definition name is followed by its solution, indented,
    both wrapped at underscores (never cut); statuses are shortened (``NUMERICAL`` for
    ``INCORRECT_NUMERICAL``), one per line. Reasons are listed under the table
    (``failure_lines``); the JSONL report keeps everything.
    """
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for rec in records:
        groups[(rec["definition"], rec["solution"])].append(rec)
    longest = max((len(n) for key in groups for n in (key[0], "  " + key[1])), default=0)
    name_width = max(_MIN_NAME, min(longest, width - _OVERHEAD - sum(w for _, w in _COLUMNS)))
    passed_total = sum(r["status"] == "PASSED" for r in records)
    table = Table(title=f"Audit summary: {passed_total}/{len(records)} cases passed",
                  caption="eager ms: geometric mean of the per-workload medians",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("definition\n  solution", width=name_width, no_wrap=True, overflow="fold")
    for header, col_width in _COLUMNS:
        table.add_column(header, width=col_width, no_wrap=True, overflow="fold",
                         justify="left" if header == "failed" else "right")
    for (definition, solution), recs in sorted(groups.items()):
        passed = sum(r["status"] == "PASSED" for r in recs)
        medians = [r["timing"]["eager"]["median_ms"] for r in recs
                   if (r.get("timing") or {}).get("eager", {}).get("median_ms") is not None]
        failed: dict[str, int] = defaultdict(int)
        for r in recs:
            if r["status"] != "PASSED":
                failed[_short(r["status"])] += 1
        name = Text("\n".join(wrap_name(definition, name_width)), style="bold")
        name.append("\n" + "\n".join(wrap_name(solution, name_width, indent="  ")))
        style = "green" if passed == len(recs) else "red"
        table.add_row(name, Text(f"{passed}/{len(recs)}", style=style),
                      f"{geomean(medians):.3f}" if medians else "-",
                      "\n".join(f"{n} {s}" for s, n in sorted(failed.items())))
    return table


def failure_lines(records: list[dict], report: str | Path | None = None) -> list[str]:
    """One line per failed case: status, definition, workload, solution and reason.

    A data error (the workload's files, not the candidate) is listed once per workload,
    not once per solution. At most ``MAX_LISTED`` lines, then a count and the report.
    """
    lines, seen = [], set()
    for rec in records:
        if rec["status"] == "PASSED":
            continue
        data = rec["status"] == "DATA_ERROR"
        key = (rec["definition"], rec["workload"], rec.get("reason")) if data else id(rec)
        if key in seen:
            continue
        seen.add(key)
        who = rec["definition"] if data else f"{rec['definition']} / {rec['solution']}"
        reason = rec.get("reason") or "(no reason recorded)"
        lines.append(f"{rec['status']}: {who}: workload {rec['workload']}: {reason}")
    if len(lines) > MAX_LISTED:
        more = len(lines) - MAX_LISTED
        lines = lines[:MAX_LISTED] + [f"... and {more} more"
                                      + (f" in {report}" if report else "")]
    return lines


def print_summary(records: list[dict], console: Console | None = None,
                  report: str | Path | None = None) -> None:
    """The table, the failed cases with their reasons, and where the report is.

    The table is sized to the console (``COLUMNS`` when output is not a terminal, else
    80); the lines under it are printed whole (soft-wrapped by the terminal) so a reason
    or a path is never broken by an inserted newline.
    """
    console = console or Console()
    console.print(summary_table(records, width=console.width))
    # Reasons and paths are copied by readers: printed whole, the terminal wraps them.
    failures = failure_lines(records, report)
    if failures:
        console.print("failed cases:", style="bold")
        for line in failures:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    if report is not None:
        failed = sum(r["status"] != "PASSED" for r in records)
        console.print(f"report: {report}  cases: {len(records)}  failed: {failed}",
                      markup=False, highlight=False, soft_wrap=True)
