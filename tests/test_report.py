"""The JSONL report: validated on write, read without crashing on a bad line, and printed
with record text escaped."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from hf_eval.data.errors import DataError
from hf_eval.judge.records import RecordError
from hf_eval.judge.report import (
    RecordProblem,
    ReportLine,
    ReportWriter,
    print_summary,
    read_records,
    read_report,
    repair_for_resume,
    safe_text,
)

STATUSES = ("PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
            "COMPILE_ERROR, TIMEOUT, DATA_ERROR")
SKIPPED_RULE = f"must be one of {STATUSES} (got 'SKIPPED')"


def record(workload: str, status: str = "PASSED", **extra) -> dict:
    return {"definition": "d", "workload": workload, "solution": "s", "status": status,
            "device": "cpu", **extra}


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ------------------------------------------------------------------------------- writing
def test_the_writer_refuses_an_invalid_record_and_writes_nothing(tmp_path):
    writer = ReportWriter(tmp_path / "r.jsonl")
    writer.write(record("w1"))
    with pytest.raises(RecordError) as info:
        writer.write(record("w2", status="SKIPPED"))
    writer.close()
    assert str(info.value) == f"status: {SKIPPED_RULE}"
    assert read_report(tmp_path / "r.jsonl") == [record("w1")]


def test_a_record_with_a_non_finite_number_is_refused_not_written_as_infinity(tmp_path):
    """Every reader parses a line as strict JSON: NaN and Infinity are not JSON."""
    writer = ReportWriter(tmp_path / "r.jsonl")
    with pytest.raises(RecordError) as info:
        writer.write(record("w1", outputs=[{"name": "o", "max_relative_error": float("inf")}]))
    writer.close()
    assert str(info.value) == ("record: holds a non-finite number (NaN or infinity), which "
                               "JSON cannot carry")
    assert (tmp_path / "r.jsonl").read_text() == ""


def test_a_huge_error_under_a_matched_ratio_has_a_finite_relative_error():
    """One wrong element allowed by a matched ratio below 1, far out of range: its
    relative error overflows FP32 but not the record."""
    import torch

    from hf_eval.data.schema import Tolerance
    from hf_eval.judge.acceptance import compare

    reference = torch.zeros(10_000, dtype=torch.bfloat16)
    candidate = reference.clone()
    candidate[0] = 3e38
    verdict = compare("o", candidate, reference,
                      Tolerance(atol=0.01, rtol=0.01, required_matched_ratio=0.9999))
    assert verdict.passed and verdict.mismatched == 1
    assert verdict.max_relative_error > 1e38 and verdict.max_relative_error != float("inf")


# ------------------------------------------------------------------------------- reading
def test_an_invalid_line_is_a_problem_naming_file_line_field_and_rule(tmp_path):
    report = write_lines(tmp_path / "r.jsonl", [record("w1"), record("w2", status="SKIPPED"),
                                                [1, 2], record("w3")])
    contents = read_records(report)
    assert [type(e) for e in contents.entries] == [ReportLine, RecordProblem, RecordProblem,
                                                   ReportLine]
    assert [r["workload"] for r in contents.records] == ["w1", "w3"]
    assert [line.where for line in contents.lines] == [f"{report}:1", f"{report}:4"]
    skipped, not_object = contents.problems
    assert str(skipped) == f"{report}:2: not a valid record: status: {SKIPPED_RULE}"
    assert (skipped.definition, skipped.workload, skipped.solution, skipped.device) == (
        "d", "w2", "s", "cpu")
    assert str(not_object) == (f"{report}:3: not a valid record: record: must be a JSON "
                               "object (got list)")
    assert (not_object.definition, not_object.workload) == (None, None)
    assert read_report(report) == [record("w1"), record("w3")]


def test_a_torn_last_line_is_noted_and_still_an_error_for_read_report(tmp_path):
    report = write_lines(tmp_path / "r.jsonl", [record("w1"), record("w2")])
    report.write_bytes(report.read_bytes()[:-20])
    contents = read_records(report)
    assert (contents.torn_line, contents.terminated, len(contents.records)) == (2, False, 1)
    with pytest.raises(DataError) as info:
        read_report(report)
    assert str(info.value) == (f"{report}:2: torn last line (an interrupted write); `audit "
                               "--resume` drops it and audits that case again")


def test_malformed_json_before_the_last_line_is_still_an_error(tmp_path):
    report = tmp_path / "r.jsonl"
    report.write_text('{"definition": \n' + json.dumps(record("w1")) + "\n")
    with pytest.raises(DataError) as info:
        read_records(report)
    assert str(info.value).startswith(f"{report}:1: malformed JSON: ")


def test_resume_notes_each_invalid_line_and_keeps_it(tmp_path):
    report = write_lines(tmp_path / "r.jsonl", [record("w1"),
                                                record("w2\x1b[2J", status="SKIPPED")])
    report.write_bytes(report.read_bytes() + b'{"definition": "d", "wor')
    before = report.read_text()
    notes = repair_for_resume(report)
    assert notes == [
        f"{report}:2: not a valid record: status: {SKIPPED_RULE}; that case is not done and "
        "is audited again",
        f"{report}:3: dropped a torn last line (an interrupted write); that case is audited "
        "again"]
    assert report.read_text() == before[:before.rindex("\n") + 1]  # only the torn line cut
    assert repair_for_resume(report) == notes[:1]
    assert repair_for_resume(tmp_path / "absent.jsonl") == []


# ------------------------------------------------------------------------------ printing
def test_safe_text_shows_every_control_character():
    assert safe_text("plain text [green]x[/green]") == "plain text [green]x[/green]"
    assert safe_text("\x1b[2J\x1b[H\x1b[32m 3/3 passed") == "\\x1b[2J\\x1b[H\\x1b[32m 3/3 passed"
    assert safe_text("a\nb\tc\rd\x00e\x7ff\x9bg") == "a\\x0ab\\x09c\\x0dd\\x00e\\x7ff\\x9bg"
    assert safe_text("evil\u202etxt.py\u200b\u2028") == "evil\\u202etxt.py\\u200b\\u2028"
    assert safe_text("héllo ✓ 名前") == "héllo ✓ 名前"
    assert safe_text(Path("/tmp/r.jsonl")) == "/tmp/r.jsonl"


def printed(records: list[dict], report: str | None = None) -> str:
    out = io.StringIO()
    print_summary(records, Console(file=out, width=200, color_system=None), report=report)
    return out.getvalue()


def test_a_reason_with_escapes_and_markup_is_printed_as_text():
    reason = "\x1b[2J\x1b[H\x1b[32m 3/3 passed [green]PASSED[/green] :thumbs_up:"
    text = printed([record("w1"), record("w2", status="INCORRECT_NUMERICAL", reason=reason)],
                   report="r\x1b[0m.jsonl")
    assert "\x1b" not in text
    assert ("INCORRECT_NUMERICAL: d / s: workload w2: \\x1b[2J\\x1b[H\\x1b[32m 3/3 passed "
            "[green]PASSED[/green] :thumbs_up:") in text
    assert "report: r\\x1b[0m.jsonl  cases: 2  failed: 1" in text
    assert "Audit summary: 1/2 cases passed" in text


def test_names_and_statuses_in_the_table_are_escaped_and_not_markup():
    evil = record("w1", status="RUNTIME_ERROR", reason="r")
    evil["solution"] = "s\x1b[2J[bold red]x[/bold red]"
    text = printed([evil, record("w2")])
    assert "\x1b" not in text
    assert "s\\x1b[2J[bold red]x[/bold red]" in text
    assert "1 RUNTIME" in text


def test_a_terminal_gets_no_escape_sequence_from_a_reason():
    """On a colour terminal the only escape sequences are rich's own styling (SGR, ending
    in ``m``): none clears the screen or moves the cursor."""
    out = io.StringIO()
    reason = "\x1b[2J\x1b[H\x1b]0;title\x07 3/3 passed"
    print_summary([record("w1", status="TIMEOUT", reason=reason)],
                  Console(file=out, width=120, force_terminal=True, color_system="truecolor"))
    sequences = re.findall(r"\x1b\[[0-9;]*[A-Za-z]|\x1b[^\[]", out.getvalue())
    assert sequences and all(s.endswith("m") for s in sequences)
    assert "\\x1b[2J\\x1b[H\\x1b]0;title\\x07 3/3 passed" in out.getvalue()


def test_listed_solution_names_are_escaped(toy_root):
    from hf_eval import listing
    from hf_eval.dataset import open_dataset
    from tests.conftest import GOOD_SOLUTION, solution_json, write_json

    write_json(toy_root / "solutions/toy/evil.json",
               solution_json("evil\x1b[2J_name", GOOD_SOLUTION))
    lines = listing.solutions(open_dataset(toy_root, resolvers=[]))
    assert "  evil\\x1b[2J_name  cpu" in lines
    assert all("\x1b" not in line for line in lines)
    assert "evil\\x1b[2J_name" in listing.solutions(open_dataset(toy_root, resolvers=[]),
                                                    names=True)
