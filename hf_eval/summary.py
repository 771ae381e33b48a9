"""Turn audit reports into ``summary.json`` and ``performance.md``.

Coverage counts, per definition and solution, the workloads that passed. Speed-ups are
paired per workload against the task's baseline solution: only workloads where both
passed and were timed on the same device count, and the ratio uses the most faithful
method both have (CUDA-graph replay, then the prepared launch when the baseline is timed
that way, then eager calls). The geometric mean, range and number of faster workloads are
reported, never a single best case.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from hf_eval.report import geomean, read_report_tolerant


def _method(candidate: dict, baseline: dict, timed: str) -> str | None:
    order = ["graph", "prepared", "eager"] if timed == "launch" else ["graph", "eager"]
    for method in order:
        a = candidate.get("timing", {}).get(method, {})
        b = baseline.get("timing", {}).get(method, {})
        if "median_ms" in a and "median_ms" in b:
            return method
    return None


def summarize_records(records: list[dict]) -> dict:
    latest: dict[tuple[str, str, str, str], dict] = {}
    for rec in records:  # a resumed or repeated case: the last line wins
        latest[(rec["definition"], rec.get("device", ""), rec["solution"], rec["workload"])] = rec
    by_def: dict[str, dict[str, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    for (definition, device, solution, workload), rec in latest.items():
        by_def[definition][solution][(device, workload)] = rec
    summary: dict = {"definitions": {}}
    for definition, solutions in sorted(by_def.items()):
        workloads = {w for recs in solutions.values() for w in recs}
        entry = {"workloads": len(workloads), "solutions": {}}
        for solution, recs in sorted(solutions.items()):
            passed = [r for r in recs.values() if r["status"] == "PASSED"]
            statuses: dict[str, int] = defaultdict(int)
            for r in recs.values():
                statuses[r["status"]] += 1
            row = {"passed": len(passed), "audited": len(recs), "statuses": dict(statuses)}
            medians = [r["timing"]["eager"]["median_ms"] for r in passed
                       if "eager" in r.get("timing", {})]
            if medians:
                row["eager_ms_geomean"] = geomean(medians)
            baseline_name = next((r.get("baseline") for r in recs.values() if r.get("baseline")),
                                 None)
            timed = next((r.get("baseline_timed") for r in recs.values()), "call") or "call"
            if baseline_name:
                row["baseline"] = baseline_name
            if baseline_name and baseline_name != solution and baseline_name in solutions:
                ratios = []
                for key, rec in recs.items():
                    base = solutions[baseline_name].get(key)
                    if rec["status"] != "PASSED" or not base or base["status"] != "PASSED":
                        continue
                    method = _method(rec, base, timed)
                    if method:
                        ratios.append(base["timing"][method]["median_ms"]
                                      / rec["timing"][method]["median_ms"])
                if ratios:
                    row["speedup_vs_baseline"] = {
                        "baseline": baseline_name, "paired_workloads": len(ratios),
                        "geomean": geomean(ratios), "min": min(ratios), "max": max(ratios),
                        "faster": sum(r > 1 for r in ratios)}
            entry["solutions"][solution] = row
        summary["definitions"][definition] = entry
    return summary


def _speedup_cell(solution: str, row: dict) -> str:
    """The speed-up, or why there is none (a bare dash explained nothing)."""
    sp = row.get("speedup_vs_baseline")
    if sp:
        return (f"{sp['geomean']:.2f}× ({sp['min']:.2f}–{sp['max']:.2f}), "
                f"{sp['faster']}/{sp['paired_workloads']} vs {sp['baseline']}")
    baseline = row.get("baseline")
    if baseline is None:
        return "— (no baseline recorded)"
    if baseline == solution:
        return "baseline"
    return f"— (no workload where {baseline} and this both passed and were timed)"


def performance_markdown(summary: dict) -> str:
    """The table of ``summary``; the speed-up column only when some row has a speed-up.

    The default audit runs one solution per definition (the preferred one, often the
    baseline itself), so there is nothing to pair: the column would be all dashes. Then
    it is left out and a sentence says how to get speed-ups.
    """
    rows = [(definition, entry, solution, row)
            for definition, entry in summary["definitions"].items()
            for solution, row in entry["solutions"].items()]
    paired = any("speedup_vs_baseline" in row for *_, row in rows)
    lines = ["# Performance", "",
             "Generated by `python -m hf_eval summarize` from audit reports. Speed-ups are "
             "paired per workload against the task's baseline (geometric mean, range, and how "
             "many workloads were faster).", ""]
    if not paired:
        lines += ["No speed-ups: in these reports no solution was timed on the same workloads "
                  "as its task's baseline. Audit the baseline too (`--solutions all`, or "
                  "`--solutions <yours>,<baseline>`) and summarize again.", ""]
    header = "| definition | solution | passed | eager ms (geomean) |"
    rule = "|---|---|---|---|"
    if paired:
        header += " speed-up vs baseline (geomean, range, faster/paired) |"
        rule += "---|"
    lines += [header, rule]
    for definition, entry, solution, row in rows:
        eager = f"{row['eager_ms_geomean']:.3f}" if "eager_ms_geomean" in row else "—"
        line = f"| {definition} | {solution} | {row['passed']}/{entry['workloads']} | {eager} |"
        if paired:
            line += f" {_speedup_cell(solution, row)} |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def summarize(reports: list[Path], out: Path) -> tuple[Path, Path, list[str]]:
    """Write ``summary.json`` and ``performance.md``; return their paths and notes.

    A missing or damaged report is a ``DataError``; a torn last line (an audit still
    running or interrupted) is left out with a note, so a partial report still summarizes.
    """
    records, notes = [], []
    for path in reports:
        found, note = read_report_tolerant(path)
        records += found
        if note:
            notes.append(note)
    summary = summarize_records(records)
    summary["reports"] = [str(p) for p in reports]
    out.mkdir(parents=True, exist_ok=True)
    summary_path, performance_path = out / "summary.json", out / "performance.md"
    summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    performance_path.write_text(performance_markdown(summary))
    return summary_path, performance_path, notes
