"""Audit reports: one JSON line per case, flushed as it completes, and a readable table.

Writing: :class:`ReportWriter` validates each record (:func:`hf_eval.judge.records.validate_record`)
before it writes it. Reading: :func:`read_records` returns every entry of a report in file
order, a :class:`ReportLine` per valid record and a :class:`RecordProblem` per line that is
JSON but not a valid record; no such line stops a reader. How each reader surfaces one:

- :func:`read_report` (the audit's ``--resume``, tests) returns the valid records only;
  :func:`repair_for_resume` returns a note per problem line, whose case is then not done
  and is audited again;
- :func:`hf_eval.judge.summary.summarize` lists problem lines in ``summary.json`` and
  ``performance.md``, counts them against their solution, and returns a note per line;
- the ``kernel_acceptance`` metric reports the case as not accepted, the problem its error.

Text that comes from a record (a candidate's reason, a solution's name, a traceback) is
passed through :func:`safe_text` before it reaches a console.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hf_eval.data.errors import DataError
from hf_eval.judge.records import RecordError, Status, reported_time, validate_record

if TYPE_CHECKING:
    import torch

#: Unicode categories printed as escapes by :func:`safe_text`: control characters (C0,
#: DEL, C1), format characters (bidirectional overrides, zero-width characters), line
#: and paragraph separators, surrogates.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def safe_text(text: object) -> str:
    """``text`` with every character that could move the cursor, recolour or reorder a
    terminal printed visibly instead: ESC as ``\\x1b`` (so an escape sequence shows as
    text), every other C0 control (newline and tab included), DEL and C1 as ``\\xNN``,
    bidirectional and other format characters as ``\\uNNNN``. Everything else is kept.

    Apply it to any text taken from a record or a candidate before it is printed, and
    print the result without rich markup (``markup=False`` or a ``rich.text.Text``), so
    ``[green]`` in a reason stays literal too.
    """
    text = str(text)
    if text.isascii() and text.isprintable():  # the common case: nothing to escape
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES else c
                   for c in text)


def _openmp_policy() -> str:
    """The audit's OpenMP wait policy as OpenMP read it when it was loaded: PASSIVE unless
    set otherwise ("default" where none was), the spin count where one overrides it, and
    "(too late)" where OpenMP was loaded before the package set its policy."""
    import hf_eval as package

    settings = package.OPENMP_SETTINGS
    text = settings["OMP_WAIT_POLICY"] or "default"
    if settings["GOMP_SPINCOUNT"] is not None:
        text += f", GOMP_SPINCOUNT={settings['GOMP_SPINCOUNT']}"
    return text + ("" if package.OPENMP_POLICY_IN_TIME else " (too late)")


def environment(device: torch.device) -> dict:
    """What a reader needs to reproduce or compare a timing."""
    import torch

    env = {"python": platform.python_version(), "torch": torch.__version__,
           "platform": platform.platform(), "cpu_count": os.cpu_count(), "device": str(device),
           "omp_wait_policy": _openmp_policy()}
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda
    try:
        env["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                           cwd=os.path.dirname(os.path.abspath(__file__)),
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
        """Write ``record`` as one line, or raise :class:`~hf_eval.judge.records.RecordError`
        (naming the field and the rule) and write nothing when it is not a valid record."""
        validate_record(record)
        try:  # strict JSON: every reader parses the line (no NaN or Infinity)
            line = json.dumps(record, sort_keys=True, allow_nan=False) + "\n"
        except ValueError:
            raise RecordError("record", "holds a non-finite number (NaN or infinity), "
                              "which JSON cannot carry") from None
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


@dataclass(frozen=True)
class ReportLine:
    """A valid record and where it was read."""

    record: dict[str, Any]
    """The record as written (it passed :func:`~hf_eval.judge.records.validate_record`)."""
    path: str
    """The report it was read from; empty for a record given in memory (the summary's)."""
    line: int
    """Its line number there, from 1; for a record given in memory, its place in the list,
    from 1."""

    @property
    def where(self) -> str:
        """``path:line``."""
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class RecordProblem:
    """A report line that is JSON but not a valid record: where, which field, which rule.

    ``definition``, ``workload``, ``solution`` and ``device`` are the line's own values
    where they are strings (None otherwise), so a reader can tell which case it was.
    """

    path: str
    """The report the line was read from; empty for a record given in memory (the
    summary's)."""
    line: int
    """The line's number there, from 1; for a record given in memory, its place in the
    list, from 1."""
    field: str
    """The field that breaks a rule (``status``, ``timing.eager.median_ms``, ``record``)."""
    rule: str
    """The rule, with the offending value."""
    definition: str | None = None
    """The line's ``definition``, where it is a non-empty string (None otherwise)."""
    workload: str | None = None
    """The line's ``workload`` UUID, where it is a non-empty string (None otherwise)."""
    solution: str | None = None
    """The line's ``solution`` name, where it is a non-empty string (None otherwise)."""
    device: str | None = None
    """The line's ``device``, where it is a non-empty string (None otherwise)."""

    @property
    def where(self) -> str:
        """``path:line``."""
        return f"{self.path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.where}: not a valid record: {self.field}: {self.rule}"

    @classmethod
    def of(cls, data: Any, error: RecordError, path: str, line: int) -> RecordProblem:
        """The problem ``error`` found in ``data``, read at ``path:line``."""
        def text(key: str) -> str | None:
            value = data.get(key) if isinstance(data, dict) else None
            return value if isinstance(value, str) and value else None

        return cls(path, line, error.field, error.rule, text("definition"), text("workload"),
                   text("solution"), text("device"))


#: One entry of a report: a valid record or a line that is not one.
ReportEntry = ReportLine | RecordProblem


@dataclass
class ReportContents:
    """Everything one report holds, as :func:`read_records` found it."""

    path: Path
    """The report that was read."""
    entries: list[ReportEntry]
    """Valid records and problem lines, in file order."""
    torn_line: int | None
    """The line number of a torn last line (left by an interrupted write), or None."""
    terminated: bool
    """Whether the file ends in a newline (or is empty): safe to append to."""

    @property
    def lines(self) -> list[ReportLine]:
        """The valid records with where each was read."""
        return [e for e in self.entries if isinstance(e, ReportLine)]

    @property
    def records(self) -> list[dict]:
        """The valid records, as written."""
        return [e.record for e in self.lines]

    @property
    def problems(self) -> list[RecordProblem]:
        """The lines that are JSON but not valid records."""
        return [e for e in self.entries if isinstance(e, RecordProblem)]


def read_records(path: str | Path) -> ReportContents:
    """Every entry of a report: valid records, problem lines and a torn last line.

    A line that is JSON but not a valid record is a :class:`RecordProblem`, never an
    exception. A torn last line is what an interrupted write leaves: the file's final
    line, with no newline after it, that is not complete JSON; it is noted in
    ``torn_line``. Any other malformed JSON is damage: a ``DataError`` naming the file
    and the line; so is a missing file.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise DataError(path, "report not found") from None
    except IsADirectoryError:
        raise DataError(path, "is a directory, not a JSONL report") from None
    lines = text.split("\n")
    entries: list[ReportEntry] = []
    torn = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        last = number == len(lines)  # after the final newline: not terminated
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            if last:
                torn = number
                break
            raise DataError(path, f"malformed JSON: {exc.msg} (only a torn last line, left "
                            "by an interrupted write, is skipped)", line=number) from None
        try:
            validate_record(data)
        except RecordError as err:
            entries.append(RecordProblem.of(data, err, str(path), number))
        else:
            entries.append(ReportLine(data, str(path), number))
    return ReportContents(path, entries, torn, text.endswith("\n") or not text)


def read_report(path: str | Path) -> list[dict]:
    """The valid records of a report, as written.

    A missing file, malformed JSON or a torn last line is a ``DataError``. A line that is
    JSON but not a valid record is left out, so its case counts as not done (``--resume``
    audits it again); :func:`read_records` lists those lines, :func:`repair_for_resume`
    notes them.
    """
    contents = read_records(path)
    if contents.torn_line is not None:
        raise DataError(path, "torn last line (an interrupted write); `audit --resume` "
                        "drops it and audits that case again", line=contents.torn_line)
    return contents.records


def repair_for_resume(path: str | Path) -> list[str]:
    """Make a report safe to append to; return a note per thing that is not carried on.

    ``--resume`` recovers from what an interrupted audit leaves: a torn last line is cut
    off (its case is then audited again), and a complete last line without its newline
    gets one, so the next record does not run into it. A line that is not a valid record
    is kept as it is and noted: its case is not done, so it is audited again. A malformed
    line before the last is an error (:func:`read_records`): that is damage, not an
    interruption.
    """
    path = Path(path)
    if not path.is_file():
        return []
    contents = read_records(path)
    notes = [f"{safe_text(problem)}; that case is not done and is audited again"
             for problem in contents.problems]
    if contents.torn_line is None:
        if not contents.terminated:
            with open(path, "a") as fh:
                fh.write("\n")
        return notes
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1  # the torn line is the last, unterminated one
    with open(path, "r+b") as fh:
        fh.truncate(keep)
    return notes + [f"{safe_text(path)}:{contents.torn_line}: dropped a torn last line (an "
                    "interrupted write); that case is audited again"]


def geomean(values: list[float]) -> float:
    """The geometric mean of positive numbers (NaN for none)."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


#: Columns beside the name: (header, width). The name column takes what is left.
_COLUMNS = (("passed", 7), ("ms", 9), ("failed", 15))
#: What the table's time is (the same figure every command reports).
TIME_CAPTION = "ms: per call, geomean; on CUDA the device time, inputs not in L2"
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
    """Per definition and solution: cases passed, the geomean of the reported times
    (:func:`hf_eval.judge.records.reported_time`), failed statuses.

    Fits ``width`` columns: each definition name is followed by its solution, indented,
    both wrapped at underscores (never cut); statuses are shortened (``NUMERICAL`` for
    ``INCORRECT_NUMERICAL``), one per line. Reasons are listed under the table
    (``failure_lines``); the JSONL report keeps everything.
    """
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for rec in records:
        groups[(safe_text(rec["definition"]), safe_text(rec["solution"]))].append(rec)
    longest = max((len(n) for key in groups for n in (key[0], "  " + key[1])), default=0)
    name_width = max(_MIN_NAME, min(longest, width - _OVERHEAD - sum(w for _, w in _COLUMNS)))
    passed_total = sum(r["status"] == Status.PASSED.value for r in records)
    table = Table(title=f"Audit summary: {passed_total}/{len(records)} cases passed",
                  caption=TIME_CAPTION,
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("definition\n  solution", width=name_width, no_wrap=True, overflow="fold")
    for header, col_width in _COLUMNS:
        table.add_column(header, width=col_width, no_wrap=True, overflow="fold",
                         justify="left" if header == "failed" else "right")
    for (definition, solution), recs in sorted(groups.items()):
        passed = sum(r["status"] == Status.PASSED.value for r in recs)
        medians = [t[1] for r in recs if (t := reported_time(r)) is not None]
        failed: dict[str, int] = defaultdict(int)
        for r in recs:
            if r["status"] != Status.PASSED.value:
                failed[_short(safe_text(r["status"]))] += 1
        name = Text("\n".join(wrap_name(definition, name_width)), style="bold")
        name.append("\n" + "\n".join(wrap_name(solution, name_width, indent="  ")))
        style = "green" if passed == len(recs) else "red"
        table.add_row(name, Text(f"{passed}/{len(recs)}", style=style),
                      Text(f"{geomean(medians):.3f}" if medians else "-"),
                      Text("\n".join(f"{n} {s}" for s, n in sorted(failed.items()))))
    return table


def failure_lines(records: list[dict], report: str | Path | None = None) -> list[str]:
    """One line per failed case: status, definition, workload, solution and reason, each
    passed through :func:`safe_text` (print them without markup).

    A data error (the workload's files, not the candidate) is listed once per workload,
    not once per solution. At most ``MAX_LISTED`` lines, then a count and the report.
    """
    lines, seen = [], set()
    for rec in records:
        if rec["status"] == Status.PASSED.value:
            continue
        data = rec["status"] == Status.DATA_ERROR.value
        key = (rec["definition"], rec["workload"], rec.get("reason")) if data else id(rec)
        if key in seen:
            continue
        seen.add(key)
        who = rec["definition"] if data else f"{rec['definition']} / {rec['solution']}"
        reason = rec.get("reason") or "(no reason recorded)"
        lines.append(safe_text(f"{rec['status']}: {who}: workload {rec['workload']}: "
                               f"{reason}"))
    if len(lines) > MAX_LISTED:
        more = len(lines) - MAX_LISTED
        lines = lines[:MAX_LISTED] + [f"... and {more} more"
                                      + (f" in {safe_text(report)}" if report else "")]
    return lines


def print_summary(records: list[dict], console: Console | None = None,
                  report: str | Path | None = None) -> None:
    """The table, the failed cases with their reasons, and where the report is.

    The table is sized to the console (``COLUMNS`` when output is not a terminal, else
    80); the lines under it are printed whole (soft-wrapped by the terminal) so a reason
    or a path is never broken by an inserted newline. Record text is printed through
    :func:`safe_text` and never read as rich markup: a reason cannot redraw the table.
    """
    console = console or Console()
    console.print(summary_table(records, width=console.width))
    # Reasons and paths are copied by readers: printed whole, the terminal wraps them.
    failures = failure_lines(records, report)
    if failures:
        console.print("failed cases:", style="bold")
        for line in failures:
            console.print(Text(line), highlight=False, soft_wrap=True)
    if report is not None:
        failed = sum(r["status"] != Status.PASSED.value for r in records)
        console.print(Text(f"report: {safe_text(report)}  cases: {len(records)}  "
                           f"failed: {failed}"), highlight=False, soft_wrap=True)
