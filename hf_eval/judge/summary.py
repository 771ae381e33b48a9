"""Turn audit reports into ``summary.json`` and ``performance.md``.

A case is one solution on one workload of one definition, on one device. The rules:

- **One record per case.** Reports are read in the order given, each in file order; where
  two lines give the same case, the later one is kept and a note names both lines.
- **A line that is not a valid record counts against its solution.** It is listed
  (``invalid_records``), counted as a failed case of the solution it names, and never as
  passed (:mod:`hf_eval.judge.report` says how each reader treats such a line).
- **Speed-ups pair the same workloads.** A solution's speed-up against the task's
  baseline is the geometric mean (with range and the number of faster workloads) of
  baseline time / solution time over the workloads where both passed and were timed on
  the same device, each ratio by the first method both have: CUDA-graph replay with a
  cold L2, the published warm replay, the prepared launch when the baseline is timed that
  way, eager calls (:data:`hf_eval.judge.records.REPORTED_ORDER`).
- **Failing solutions are not ranked.** A solution that failed any workload it was
  audited on (any status but PASSED and DATA_ERROR, or an invalid record) has no speed-up
  and no rank; the row says why (``unranked``).
- **Ranks compare one workload set.** The comparison set of a definition is the workloads
  its baseline passed and was timed on. A solution is ranked only when it was paired on
  every one of them; the baseline counts as 1.0×. Ranks go by speed-up, fastest first;
  equal speed-ups share a rank.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from hf_eval.judge.records import RecordError, Status, method_ms, reported_time, validate_record
from hf_eval.judge.report import (
    TIME_CAPTION,
    RecordProblem,
    ReportEntry,
    ReportLine,
    geomean,
    read_records,
    safe_text,
)


class CaseKey(NamedTuple):
    """What makes two records the same case."""

    definition: str
    """The definition's name."""
    device: str
    """The device the record names ("cpu", "cuda:0"); empty when it names none."""
    solution: str
    """The solution's name; ``name@<hash>`` where records of one name carry several
    solution hashes."""
    workload: str
    """The workload's UUID."""


@dataclass
class SpeedUp:
    """A solution's speed-up against its task's baseline, over the workloads both passed
    and were timed on (the ratio of each is baseline time / solution time)."""

    baseline: str
    """The baseline solution's name."""
    paired_workloads: int
    """How many workloads were paired."""
    geomean: float
    """The geometric mean of the paired workloads' ratios (above 1: faster than the
    baseline)."""
    min: float
    """The smallest ratio over the paired workloads."""
    max: float
    """The largest ratio over the paired workloads."""
    faster: int
    """How many paired workloads were faster than the baseline."""
    baseline_workloads: int
    """How many workloads the baseline passed and was timed on (the comparison set)."""


@dataclass
class SolutionRow:
    """One solution of one definition in ``summary.json``."""

    passed: int
    """Cases that passed."""
    audited: int
    """Cases with a valid record."""
    invalid: int
    """Cases whose record is not a valid record (each counted as failed)."""
    statuses: dict[str, int]
    """Valid records per status."""
    baseline: str | None
    """The task's baseline, as the records name it (None when none does)."""
    ms_geomean: float | None
    """Geometric mean of the reported times (:func:`hf_eval.judge.records.reported_time`) of
    this solution's passed cases, in ms: its own workloads, so it compares with no other
    row; speed-ups do. None when no passed case was timed."""
    speedup_vs_baseline: SpeedUp | None = None
    """The speed-up against the baseline, or None (``unranked`` says why)."""
    rank: int | None = None
    """1 for the fastest of the definition's ranked solutions; None when unranked."""
    unranked: str | None = None
    """Why the solution has no rank; None when it has one."""


@dataclass
class Replacement:
    """A case given twice: the later line is kept."""

    case: CaseKey
    """The case given twice."""
    kept: str
    """``path:line`` (or ``record N``) of the line kept: the later one, or an earlier timed
    one that a later line without timing left in place."""
    replaced: str
    """``path:line`` (or ``record N``) of the line not kept: the earlier one it replaces,
    or that later line without timing."""

    def note(self) -> str:
        c = self.case
        return safe_text(f"{self.kept} replaces {self.replaced} for {c.solution} on "
                         f"{c.definition} workload {c.workload} ({c.device or 'no device'}): "
                         "the later record is kept")


@dataclass
class InvalidRecord:
    """A line that is not a valid record, and what the summary made of it."""

    where: str
    """``path:line`` of the line (``record N`` for a record given in memory)."""
    field: str
    """The field that breaks a rule (``status``, ``timing.eager.median_ms``, ``record``)."""
    rule: str
    """The rule, with the offending value."""
    definition: str | None
    """The line's ``definition``, where it is a non-empty string (None otherwise)."""
    workload: str | None
    """The line's ``workload`` UUID, where it is a non-empty string (None otherwise)."""
    solution: str | None
    """The line's ``solution`` name, where it is a non-empty string (None otherwise)."""
    counted_as: Literal["failed", "replaced", "nothing"] = "nothing"
    """``failed``: counted as a failed case of its solution; ``replaced``: a later line
    of the same case is kept; ``nothing``: it names no case, so it counts nowhere."""

    def note(self) -> str:
        outcome = {"failed": f"counted as a failed case of {self.solution}",
                   "replaced": "a later record of that case is kept",
                   "nothing": "it names no case, so it is counted nowhere"}[self.counted_as]
        return safe_text(f"{self.where}: not a valid record: {self.field}: {self.rule}; "
                         f"{outcome}")


@dataclass
class _Cases:
    """The latest entry per case, and what reading them in order found."""

    latest: dict[CaseKey, ReportEntry] = field(default_factory=dict)
    """Per case, the entry that counts: a valid record or a problem line."""
    replaced: list[Replacement] = field(default_factory=list)
    """The cases given twice where the later line replaced the earlier, in reading order."""
    invalid: list[InvalidRecord] = field(default_factory=list)
    """Every line that is not a valid record, in reading order."""
    baselines: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Per definition, the baseline and how it is timed ("call" or "launch"), as the last
    record naming one says (a task's baseline may have changed between reports)."""
    untimed: list[Replacement] = field(default_factory=list)
    """Later records without timing that left an earlier timed one of the same solution
    and status in place (``kept`` is the timed one)."""
    sources: dict[tuple[str, str], set[str]] = field(
        default_factory=lambda: defaultdict(set))
    """Per (definition, solution name), the solution hashes its records name: more than
    one is two solutions under one name (two folders of the same name, say)."""


def _where(entry: ReportEntry) -> str:
    return entry.where if entry.path else f"record {entry.line}"


def _entry(item: dict | ReportEntry, index: int) -> ReportEntry:
    """A report entry for ``item``; a plain dict is validated here (``record N``)."""
    if isinstance(item, ReportLine | RecordProblem):
        return item
    try:
        validate_record(item)
    except RecordError as err:
        return RecordProblem.of(item, err, "", index)
    return ReportLine(item, "", index)


def _key(entry: ReportEntry) -> CaseKey | None:
    if isinstance(entry, ReportLine):
        rec = entry.record
        return CaseKey(rec["definition"], rec.get("device", ""), rec["solution"],
                       rec["workload"])
    if entry.definition and entry.solution and entry.workload:
        return CaseKey(entry.definition, entry.device or "", entry.solution, entry.workload)
    return None


def _digest(entry: ReportEntry) -> str | None:
    """The solution hash a valid record names, or None."""
    if not isinstance(entry, ReportLine):
        return None
    return (entry.record.get("hashes") or {}).get("solution") or None


def _collect(records: Iterable[dict | ReportEntry]) -> _Cases:
    """The latest entry per case. A name whose records name several solution hashes
    (two folders of one name, two authors) is several solutions: each hash's records go
    under ``name@<hash>``, so neither replaces the other. A later record without timing
    never replaces an earlier timed one of the same solution and status (a re-check)."""
    cases = _Cases()
    entries = [_entry(item, index) for index, item in enumerate(records, start=1)]
    for entry in entries:
        key, digest = _key(entry), _digest(entry)
        if key is not None and digest:
            cases.sources[(key.definition, key.solution)].add(digest)
    shared = {k for k, v in cases.sources.items() if len(v) > 1}
    #: The invalid record a case's latest line is, while it is the latest.
    current_invalid: dict[CaseKey, InvalidRecord] = {}
    for entry in entries:
        key = _key(entry)
        invalid = None
        if isinstance(entry, RecordProblem):
            invalid = InvalidRecord(_where(entry), entry.field, entry.rule, entry.definition,
                                    entry.workload, entry.solution)
            cases.invalid.append(invalid)
        if key is None:
            continue
        digest = _digest(entry)
        if digest and (key.definition, key.solution) in shared:
            key = key._replace(solution=f"{key.solution}@{digest[:12]}")
        if isinstance(entry, ReportLine) and entry.record.get("baseline"):
            cases.baselines[key.definition] = (entry.record["baseline"],
                                               entry.record.get("baseline_timed") or "call")
        earlier = cases.latest.get(key)
        if (isinstance(earlier, ReportLine) and isinstance(entry, ReportLine)
                and _digest(earlier) == digest
                and earlier.record["status"] == entry.record["status"]
                and reported_time(earlier.record) is not None
                and reported_time(entry.record) is None):
            cases.untimed.append(Replacement(key, _where(earlier), _where(entry)))
            continue
        if earlier is not None:
            cases.replaced.append(Replacement(key, _where(entry), _where(earlier)))
            if key in current_invalid:
                current_invalid.pop(key).counted_as = "replaced"
        cases.latest[key] = entry
        if invalid is not None:
            invalid.counted_as = "failed"
            current_invalid[key] = invalid
    return cases


def _methods(timed: str) -> list[str]:
    """Timing methods that pair with a baseline timed as ``timed``, most faithful first."""
    return ["cold", "graph", "prepared", "eager"] if timed == "launch" else \
        ["cold", "graph", "eager"]


def _method(candidate: dict, baseline: dict, timed: str) -> str | None:
    """The most faithful timing method both records have a positive median for."""
    for method in _methods(timed):
        if method_ms(candidate, method) is not None and method_ms(baseline, method) is not None:
            return method
    return None


def _timed(record: dict, timed: str) -> bool:
    """Whether ``record`` has a positive median by a method that pairs with the baseline."""
    return any(method_ms(record, method) is not None for method in _methods(timed))


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _failures(valid: dict, invalid: int) -> str | None:
    """Why a solution with failed cases is unranked; None when it failed none."""
    failed = sum(Status(r["status"]).candidate_failed for r in valid.values()) + invalid
    if not failed:
        return None
    why = f"failed {failed} of {_plural(len(valid) + invalid, 'workload')}"
    return why + (f" ({_plural(invalid, 'invalid record')})" if invalid else "")


def _definition_rows(solutions: dict[str, dict[tuple[str, str], ReportEntry]],
                     baseline: str | None, timed: str, shared: set[str]) -> dict:
    """The rows of one definition's solutions, ranked where the rules allow, against
    ``baseline`` timed as ``timed`` (``call`` or ``launch``); a baseline name in
    ``shared`` names several solutions (its rows are split by hash), so nothing pairs
    with it."""
    base_recs = {k: e.record for k, e in solutions.get(baseline, {}).items()
                 if isinstance(e, ReportLine)}
    comparison = {k for k, r in base_recs.items()
                  if r["status"] == Status.PASSED.value and _timed(r, timed)}
    rows: dict[str, SolutionRow] = {}
    scores: dict[str, float] = {}
    for solution, entries in sorted(solutions.items()):
        valid = {k: e.record for k, e in entries.items() if isinstance(e, ReportLine)}
        invalid = sum(isinstance(e, RecordProblem) for e in entries.values())
        passed = [r for r in valid.values() if r["status"] == Status.PASSED.value]
        statuses: dict[str, int] = defaultdict(int)
        for r in valid.values():
            statuses[r["status"]] += 1
        times = [t[1] for r in passed if (t := reported_time(r)) is not None]
        row = SolutionRow(passed=len(passed), audited=len(valid), invalid=invalid,
                          statuses=dict(statuses), baseline=baseline,
                          ms_geomean=geomean(times) if times else None)
        rows[solution] = row
        row.unranked = _failures(valid, invalid)
        if row.unranked:
            continue
        if baseline is None:
            row.unranked = "no baseline recorded"
        elif baseline in shared:
            row.unranked = f"baseline {baseline} names several solutions (see the notes)"
        elif baseline not in solutions:
            row.unranked = f"baseline {baseline} not audited in these reports"
        elif not comparison:
            row.unranked = f"no workload where {baseline} passed and was timed"
        elif solution == baseline:
            scores[solution] = 1.0
        else:
            ratios = []
            for key in sorted(comparison & valid.keys()):
                rec, base = valid[key], base_recs[key]
                method = _method(rec, base, timed) if rec["status"] == Status.PASSED.value else None
                if method:
                    ratios.append(method_ms(base, method) / method_ms(rec, method))
            if not ratios:
                row.unranked = (f"no workload where {baseline} and this both passed and "
                                "were timed")
                continue
            row.speedup_vs_baseline = SpeedUp(
                baseline=baseline, paired_workloads=len(ratios), geomean=geomean(ratios),
                min=min(ratios), max=max(ratios), faster=sum(r > 1 for r in ratios),
                baseline_workloads=len(comparison))
            if len(ratios) < len(comparison):
                row.unranked = (f"paired on {len(ratios)} of the "
                                f"{_plural(len(comparison), 'workload')} {baseline} passed "
                                "and was timed on")
            else:
                scores[solution] = row.speedup_vs_baseline.geomean
    for solution, score in scores.items():
        rows[solution].rank = 1 + sum(other > score for other in scores.values())
    return {solution: asdict(row) for solution, row in rows.items()}


def summarize_records(records: Iterable[dict | ReportEntry]) -> dict:
    """The summary of ``records`` (see the module's rules), ready for ``summary.json``.

    ``records`` are report entries in the order they were written (as
    :func:`hf_eval.judge.report.read_records` returns them, report after report) or plain
    record dicts, which are validated here and named ``record N`` in notes. The result:
    ``definitions`` (per definition: ``workloads``, ``baseline`` and per solution a
    :class:`SolutionRow`), ``invalid_records`` (:class:`InvalidRecord`) and ``replaced``
    (:class:`Replacement`), each note in ``notes``.
    """
    cases = _collect(records)
    by_def: dict[str, dict[str, dict[tuple[str, str], ReportEntry]]] = \
        defaultdict(lambda: defaultdict(dict))
    for key, entry in cases.latest.items():
        by_def[key.definition][key.solution][(key.device, key.workload)] = entry
    shared = {k: sorted(v) for k, v in cases.sources.items() if len(v) > 1}
    definitions = {}
    for definition, solutions in sorted(by_def.items()):
        workloads = {k for entries in solutions.values() for k in entries}
        baseline, timed = cases.baselines.get(definition, (None, "call"))
        rows = _definition_rows(solutions, baseline, timed,
                                {s for d, s in shared if d == definition})
        definitions[definition] = {"workloads": len(workloads), "baseline": baseline,
                                   "solutions": rows}
    conflicts = [safe_text(f"{solution} names {len(digests)} different solutions on "
                           f"{definition}: their records are kept apart, as "
                           f"{', '.join(f'{solution}@{d[:12]}' for d in digests)}")
                 for (definition, solution), digests in sorted(shared.items())]
    untimed = [safe_text(f"{u.replaced} has no timing: {u.kept}, timed, is kept for "
                         f"{u.case.solution} on {u.case.definition} workload "
                         f"{u.case.workload} ({u.case.device or 'no device'})")
               for u in cases.untimed]
    return {"definitions": definitions,
            "invalid_records": [asdict(i) for i in cases.invalid],
            "replaced": [{**r.case._asdict(), "kept": r.kept, "replaced": r.replaced}
                         for r in cases.replaced],
            "notes": conflicts + untimed + [r.note() for r in cases.replaced]
            + [i.note() for i in cases.invalid]}


#: What markdown would read as markup in a table cell: emphasis, code, links and images,
#: strike-through, the cell's end, and an underscore that is not inside a word.
_MARKUP = re.compile(r"([\\`*\[\]|~!])|((?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def _cell(text: object) -> str:
    """Record text as a markdown table cell that renders as the text it is: control
    characters escaped (:func:`safe_text`), markup backslash-escaped, ``<`` and ``&`` as
    entities (no tag), so a name can be no emphasis, link, image or HTML."""
    text = safe_text(text).replace("&", "&amp;").replace("<", "&lt;")
    text = _MARKUP.sub(lambda m: "\\" + m.group(0), text)
    # no autolink either (GitHub links www.x, x@y.z and scheme://x in plain text)
    text = re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "&#46;", text)
    return text.replace("@", "&#64;").replace("://", ":&#47;&#47;")


def _speedup_cell(solution: str, row: dict) -> str:
    """The speed-up; ``baseline`` for the baseline itself; else a dash (the rank column
    says why)."""
    sp = row.get("speedup_vs_baseline")
    if sp:
        return _cell(f"{sp['geomean']:.2f}× ({sp['min']:.2f}–{sp['max']:.2f}), "
                     f"{sp['faster']}/{sp['paired_workloads']} vs {sp['baseline']}")
    return "baseline" if row.get("baseline") == solution else "—"


def _rank_cell(row: dict) -> str:
    return str(row["rank"]) if row.get("rank") is not None else \
        _cell(f"unranked: {row.get('unranked')}")


def performance_markdown(summary: dict) -> str:
    """The table of ``summary``; speed-up and rank columns only when some solution was
    audited beside its baseline; then the notes (replaced and invalid records), if any.

    The default audit runs one solution per definition (the preferred one, often the
    baseline itself), so there is nothing to pair: the columns would be all dashes. Then
    they are left out and a sentence says how to get speed-ups. Record text is escaped.
    """
    rows = [(definition, entry, solution, row)
            for definition, entry in summary["definitions"].items()
            for solution, row in entry["solutions"].items()]
    compared = any(solution != row.get("baseline") and row.get("baseline") in entry["solutions"]
                 for _, entry, solution, row in rows)
    lines = ["# Performance", "",
             "Generated by `python -m hf_eval summarize` from audit reports. Speed-ups are "
             "paired per workload against the task's baseline (geometric mean, range, and how "
             "many workloads were faster). A solution that failed any workload it was "
             "audited on has no speed-up and no rank; a rank needs every workload the "
             f"baseline passed and was timed on. {TIME_CAPTION[0].upper()}{TIME_CAPTION[1:]}.",
             ""]
    if not compared:
        lines += ["No speed-ups: in these reports no solution was timed on the same workloads "
                  "as its task's baseline. Audit the baseline too (`--solutions all`, or "
                  "`--solutions <yours>,<baseline>`) and summarize again.", ""]
    header = "| definition | solution | passed | ms per call (geomean) |"
    rule = "|---|---|---|---|"
    if compared:
        header += " speed-up vs baseline (geomean, range, faster/paired) | rank |"
        rule += "---|---|"
    lines += [header, rule]
    for definition, entry, solution, row in rows:
        ms = row.get("ms_geomean")
        ms = f"{ms:#.4g}" if ms else "—"
        passed = f"{row['passed']}/{entry['workloads']}"
        if row.get("invalid"):
            passed += f" ({_plural(row['invalid'], 'invalid record')})"
        line = f"| {_cell(definition)} | {_cell(solution)} | {passed} | {ms} |"
        if compared:
            line += f" {_speedup_cell(solution, row)} | {_rank_cell(row)} |"
        lines.append(line)
    notes = summary.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {_cell(note)}" for note in notes]
    return "\n".join(lines) + "\n"


def summarize(reports: list[Path], out: Path) -> tuple[Path, Path, list[str]]:
    """Write ``summary.json`` and ``performance.md``; return their paths and notes.

    A missing or damaged report is a ``DataError``; a torn last line (an audit still
    running or interrupted) is left out with a note, so a partial report still summarizes.
    Every line that is not a valid record and every replaced record gets a note (escaped
    with :func:`safe_text`, ready to print) and is listed in both files.
    """
    entries: list[ReportEntry] = []
    notes = []
    for path in reports:
        contents = read_records(path)
        entries += contents.entries
        if contents.torn_line is not None:
            notes.append(f"{safe_text(path)}:{contents.torn_line}: ignored a torn last line "
                         "(an interrupted write); that case is not summarized")
    summary = summarize_records(entries)
    summary["reports"] = [str(p) for p in reports]
    out.mkdir(parents=True, exist_ok=True)
    summary_path, performance_path = out / "summary.json", out / "performance.md"
    summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    performance_path.write_text(performance_markdown(summary))
    return summary_path, performance_path, notes + summary["notes"]
