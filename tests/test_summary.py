"""summarize: coverage and paired speed-ups from hand-written report lines."""

from __future__ import annotations

import json
import math

from hf_eval.judge.summary import performance_markdown, summarize, summarize_records

STATUSES = ("PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
            "COMPILE_ERROR, TIMEOUT, DATA_ERROR")


def record(solution: str, workload: str, ms: float | None, status: str = "PASSED") -> dict:
    rec = {"definition": "d", "device": "cpu", "solution": solution, "workload": workload,
           "status": status, "baseline": "base", "baseline_timed": "call"}
    if ms is not None:
        rec["timing"] = {"eager": {"median_ms": ms}}
    return rec


def rows(records: list) -> dict:
    return summarize_records(records)["definitions"]["d"]["solutions"]


def write(path, records: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


BASE = [record("base", "w1", 2.0), record("base", "w2", 4.0), record("base", "w3", 1.0)]


def test_paired_speedup_over_the_workloads_both_were_audited_on():
    fast = rows(BASE + [record("fast", "w1", 1.0), record("fast", "w2", 8.0),
                        record("fast", "w3", 0.5)])["fast"]
    sp = fast["speedup_vs_baseline"]
    assert (sp["paired_workloads"], sp["baseline_workloads"], sp["faster"]) == (3, 3, 2)
    assert math.isclose(sp["geomean"], (2.0 * 0.5 * 2.0) ** (1 / 3))
    assert (sp["min"], sp["max"]) == (0.5, 2.0)
    assert (fast["rank"], fast["unranked"]) == (1, None)


def test_a_solution_that_failed_a_workload_has_no_speedup_and_no_rank():
    summary = rows(BASE + [record("fast", "w1", 1.0), record("fast", "w2", 8.0),
                           record("fast", "w3", 0.5, status="INCORRECT_NUMERICAL")])
    fast = summary["fast"]
    assert fast["speedup_vs_baseline"] is None and fast["rank"] is None
    assert fast["unranked"] == "failed 1 of 3 workloads"
    assert fast["passed"] == 2 and fast["statuses"] == {"PASSED": 2, "INCORRECT_NUMERICAL": 1}
    assert (summary["base"]["rank"], summary["base"]["speedup_vs_baseline"]) == (1, None)


def test_a_failing_baseline_is_unranked_and_others_pair_on_what_it_passed():
    summary = rows([record("base", "w1", 2.0), record("base", "w2", None, "TIMEOUT"),
                    record("fast", "w1", 1.0), record("fast", "w2", 1.0)])
    assert summary["base"]["unranked"] == "failed 1 of 2 workloads"
    assert summary["fast"]["speedup_vs_baseline"]["paired_workloads"] == 1
    assert summary["fast"]["rank"] == 1


def test_a_speedup_never_pairs_workloads_only_one_side_was_audited_on():
    """Audited on one of the baseline's three workloads: the speed-up pairs that one only,
    and the solution is not ranked against solutions that ran them all."""
    summary = rows(BASE + [record("easy", "w3", 0.1), record("all", "w1", 1.0),
                           record("all", "w2", 2.0), record("all", "w3", 0.5)])
    easy = summary["easy"]
    assert easy["speedup_vs_baseline"]["paired_workloads"] == 1
    assert math.isclose(easy["speedup_vs_baseline"]["geomean"], 10.0)
    assert easy["rank"] is None
    assert easy["unranked"] == "paired on 1 of the 3 workloads base passed and was timed on"
    assert (summary["all"]["rank"], summary["base"]["rank"]) == (1, 2)


def test_ranks_go_by_speedup_and_ties_share_a_rank():
    summary = rows([record("base", "w1", 4.0), record("a", "w1", 1.0), record("b", "w1", 1.0),
                    record("slow", "w1", 8.0)])
    assert {name: row["rank"] for name, row in summary.items()} == {
        "a": 1, "b": 1, "base": 3, "slow": 4}


def test_why_a_passing_solution_is_unranked():
    no_base = record("x", "w1", 1.0)
    del no_base["baseline"]
    assert rows([no_base])["x"]["unranked"] == "no baseline recorded"
    assert rows([record("x", "w1", 1.0)])["x"]["unranked"] == \
        "baseline base not audited in these reports"
    untimed = rows([record("base", "w1", None), record("x", "w1", None)])
    assert untimed["x"]["unranked"] == untimed["base"]["unranked"] == \
        "no workload where base passed and was timed"
    assert rows([record("base", "w1", 2.0), record("x", "w1", None)])["x"]["unranked"] == \
        "no workload where base and this both passed and were timed"


def test_a_zero_time_counts_as_not_timed():
    assert rows([record("base", "w1", 2.0), record("x", "w1", 0.0)])["x"]["unranked"] == \
        "no workload where base and this both passed and were timed"


def test_graph_timing_preferred_when_both_have_it():
    a, b = record("base", "w1", 10.0), record("fast", "w1", 10.0)
    a["timing"]["graph"] = {"median_ms": 3.0}
    b["timing"]["graph"] = {"median_ms": 1.0}
    assert math.isclose(rows([a, b])["fast"]["speedup_vs_baseline"]["geomean"], 3.0)


def test_a_repeated_case_keeps_the_last_line_and_says_so():
    summary = summarize_records([record("fast", "w1", None, status="TIMEOUT"),
                                 record("fast", "w1", 1.0)])
    assert summary["definitions"]["d"]["solutions"]["fast"]["passed"] == 1
    assert summary["replaced"] == [{"definition": "d", "device": "cpu", "solution": "fast",
                                    "workload": "w1", "kept": "record 2",
                                    "replaced": "record 1"}]
    assert summary["notes"] == ["record 2 replaces record 1 for fast on d workload w1 (cpu): "
                                "the later record is kept"]


def test_a_case_in_two_reports_keeps_the_later_report_with_a_note(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write(first, [record("base", "w1", 2.0), record("fast", "w1", 1.0, status="TIMEOUT")])
    write(second, [record("fast", "w1", 1.0)])
    summary_path, _, notes = summarize([first, second], tmp_path / "out")
    assert notes == [f"{second}:1 replaces {first}:2 for fast on d workload w1 (cpu): the "
                     "later record is kept"]
    fast = json.loads(summary_path.read_text())["definitions"]["d"]["solutions"]["fast"]
    assert (fast["passed"], fast["rank"]) == (1, 1)


def test_an_invalid_line_is_listed_and_counts_as_failed(tmp_path):
    report = tmp_path / "r.jsonl"
    write(report, BASE + [record("fast", "w1", 1.0), record("fast", "w2", 1.0),
                          record("fast", "w3", 0.1, status="SKIPPED"),
                          {"definition": "d", "status": "PASSED"}])
    summary_path, md_path, notes = summarize([report], tmp_path / "out")
    rule = f"must be one of {STATUSES} (got 'SKIPPED')"
    assert notes == [
        f"{report}:6: not a valid record: status: {rule}; counted as a failed case of fast",
        f"{report}:7: not a valid record: workload: must be a non-empty string (missing); it "
        "names no case, so it is counted nowhere"]
    summary = json.loads(summary_path.read_text())
    fast = summary["definitions"]["d"]["solutions"]["fast"]
    assert (fast["passed"], fast["audited"], fast["invalid"]) == (2, 2, 1)
    assert fast["speedup_vs_baseline"] is None
    assert fast["unranked"] == "failed 1 of 3 workloads (1 invalid record)"
    assert summary["invalid_records"][0] == {
        "where": f"{report}:6", "field": "status", "rule": rule, "definition": "d",
        "workload": "w3", "solution": "fast", "counted_as": "failed"}
    text = md_path.read_text()
    assert "| d | fast | 2/3 (1 invalid record) | 1.000 | — | unranked: failed 1 of 3 " \
           "workloads (1 invalid record) |" in text
    assert f"## Notes\n\n- {report}:6: not a valid record: status: " in text


def test_an_invalid_line_redone_by_a_later_record_is_replaced():
    summary = summarize_records([record("base", "w1", 2.0),
                                 record("fast", "w1", 1.0, status="SKIPPED"),
                                 record("fast", "w1", 1.0)])
    assert summary["invalid_records"][0]["counted_as"] == "replaced"
    fast = summary["definitions"]["d"]["solutions"]["fast"]
    assert (fast["invalid"], fast["rank"]) == (0, 1)


def test_files_written(tmp_path):
    report = tmp_path / "r.jsonl"
    write(report, [record("base", "w1", 2.0), record("fast", "w1", 1.0)])
    summary_path, md_path, notes = summarize([report], tmp_path / "out")
    assert notes == []
    assert json.loads(summary_path.read_text())["definitions"]["d"]["workloads"] == 1
    text = md_path.read_text()
    assert "| d | fast | 1/1 | 1.000 | 2.00× (2.00–2.00), 1/1 vs base | 1 |" in text
    assert "| d | base | 1/1 | 2.000 | baseline | 2 |" in text
    assert performance_markdown(json.loads(summary_path.read_text())) == text


def test_record_text_in_the_markdown_is_escaped():
    evil = record("x\x1b[2J|y", "w1", 1.0)
    text = performance_markdown(summarize_records([record("base", "w1", 2.0), evil]))
    assert "| d | x\\\\x1b\\[2J\\|y | 1/1 | 1.000 | 2.00× (2.00–2.00), 1/1 vs base | 1 |" in text
    assert "\x1b" not in text


def test_a_name_renders_as_its_text_not_as_markup():
    """A candidate's name (a folder's) is no emphasis, link, image or HTML tag in the
    markdown: it cannot print a rank or a speed-up of its own."""
    evil = record("**rank_1** [x](http://e) ![i](http://e/i.png) <b>b</b> & _y_ "
                  "www.e.com a@e.com", "w1", 1.0)
    text = performance_markdown(summarize_records([record("base", "w1", 2.0), evil]))
    assert ("| d | \\*\\*rank_1\\*\\* \\[x\\](http:&#47;&#47;e) \\!\\[i\\]"
            "(http:&#47;&#47;e/i.png) &lt;b>b&lt;/b> &amp; \\_y\\_ www&#46;e.com a&#64;e.com "
            "| 1/1 |") in text


def test_two_solutions_under_one_name_are_kept_apart():
    """Two folders of the same name give two candidates of the same name: their records
    are not one solution's, so each hash's records get a row of their own (name@hash),
    and neither author's figures replace or blank the other's."""
    def of(solution, workload, ms, digest, status="PASSED"):
        return {**record(solution, workload, ms, status), "hashes": {"solution": digest * 64}}

    summary = summarize_records(BASE + [of("candidate-foo", w, 1.0, "a")
                                        for w in ("w1", "w2", "w3")]
                                + [of("candidate-foo", w, None, "b", "INCORRECT_NUMERICAL")
                                   for w in ("w1", "w2", "w3")])
    rows_ = summary["definitions"]["d"]["solutions"]
    alice, mallory = rows_[f"candidate-foo@{'a' * 12}"], rows_[f"candidate-foo@{'b' * 12}"]
    assert (alice["passed"], alice["rank"]) == (3, 1)
    assert (mallory["passed"], mallory["rank"]) == (0, None)
    assert "candidate-foo" not in rows_
    assert summary["notes"] == [f"candidate-foo names 2 different solutions on d: their "
                                f"records are kept apart, as candidate-foo@{'a' * 12}, "
                                f"candidate-foo@{'b' * 12}"]


def test_an_untimed_record_never_replaces_a_timed_one_of_the_same_solution():
    """A re-check without timing (--validation-only) of the same sources keeps the timed
    record: a copy of someone's sources cannot erase their time."""
    timed = {**record("fast", "w1", 1.0), "hashes": {"solution": "c" * 64}}
    check = {**record("fast", "w1", None), "hashes": {"solution": "c" * 64}}
    summary = summarize_records(BASE + [timed, check])
    fast = summary["definitions"]["d"]["solutions"]["fast"]
    assert (fast["ms_geomean"], fast["passed"]) == (1.0, 1)
    assert summary["notes"] == ["record 5 has no timing: record 4, timed, is kept for fast "
                                "on d workload w1 (cpu)"]
