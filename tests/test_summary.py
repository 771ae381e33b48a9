"""summarize: coverage and paired speed-ups from hand-written report lines."""

from __future__ import annotations

import json
import math

from hf_eval.summary import performance_markdown, summarize, summarize_records


def record(solution: str, workload: str, ms: float | None, status: str = "PASSED") -> dict:
    rec = {"definition": "d", "device": "cpu", "solution": solution, "workload": workload,
           "status": status, "baseline": "base", "baseline_timed": "call"}
    if ms is not None:
        rec["timing"] = {"eager": {"median_ms": ms}}
    return rec


def test_paired_speedup_uses_only_workloads_both_passed():
    records = [record("base", "w1", 2.0), record("base", "w2", 4.0), record("base", "w3", 1.0),
               record("fast", "w1", 1.0), record("fast", "w2", 8.0),
               record("fast", "w3", 0.5, status="INCORRECT_NUMERICAL")]
    summary = summarize_records(records)
    fast = summary["definitions"]["d"]["solutions"]["fast"]
    sp = fast["speedup_vs_baseline"]
    assert sp["paired_workloads"] == 2 and sp["faster"] == 1
    assert math.isclose(sp["geomean"], math.sqrt(2.0 * 0.5))
    assert (sp["min"], sp["max"]) == (0.5, 2.0)
    assert fast["passed"] == 2 and fast["statuses"] == {"PASSED": 2, "INCORRECT_NUMERICAL": 1}
    assert "speedup_vs_baseline" not in summary["definitions"]["d"]["solutions"]["base"]


def test_graph_timing_preferred_when_both_have_it():
    a, b = record("base", "w1", 10.0), record("fast", "w1", 10.0)
    a["timing"]["graph"] = {"median_ms": 3.0}
    b["timing"]["graph"] = {"median_ms": 1.0}
    sp = summarize_records([a, b])["definitions"]["d"]["solutions"]["fast"]
    assert math.isclose(sp["speedup_vs_baseline"]["geomean"], 3.0)


def test_last_line_wins_for_a_repeated_case():
    records = [record("fast", "w1", None, status="TIMEOUT"), record("fast", "w1", 1.0)]
    assert summarize_records(records)["definitions"]["d"]["solutions"]["fast"]["passed"] == 1


def test_files_written(tmp_path):
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in
                              [record("base", "w1", 2.0), record("fast", "w1", 1.0)]))
    summary_path, md_path, notes = summarize([report], tmp_path / "out")
    assert notes == []
    assert json.loads(summary_path.read_text())["definitions"]["d"]["workloads"] == 1
    text = md_path.read_text()
    assert "| d | fast | 1/1 |" in text and "2.00×" in text
    assert performance_markdown(json.loads(summary_path.read_text())) == text
