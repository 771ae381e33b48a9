"""What a newcomer meets, through the real command line in a subprocess.

Each test breaks or uses a copy of a small dataset root the way a user would and asserts
the exact message and exit code: 0 all passed, 1 a candidate failed (check: a problem),
2 bad input or data.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from hf_eval.data import tensorfile
from hf_eval.data.store import TensorStore, sha256_file
from hf_eval.judge.report import read_report
from tests.cli_kit import REPO, hf_eval, no_traceback
from tests.conftest import GOOD_SOLUTION, python_path, solution_json, write_json

DEF = "toy_linear_n8_k16"
WL = f"workloads/toy/{DEF}.jsonl"
UUIDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]


def rows(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / WL).read_text().splitlines()]


def write_rows(root: Path, found: list[dict]) -> None:
    (root / WL).write_text("".join(json.dumps(r) + "\n" for r in found))


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and mtime: what "nothing written" compares."""
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def name_column(table: str) -> str:
    """The table's first column read top to bottom, white space dropped: a wrapped name
    comes back whole (it is broken only after an underscore), a cut one does not."""
    return "".join(m.group(1) for line in table.splitlines()
                   if (m := re.match(r"\s*(\S+)", line)))


def audit(root: Path, report: Path, *extra: str, columns: int = 200):
    """``audit`` over the toy's three workloads (``--suite sample``) unless ``extra`` selects:
    these tests are about tables and reports; the default suite (dev) has its own test."""
    if not {"--suite", "--uuid"} & set(extra):
        extra = ("--suite", "sample", *extra)
    result = hf_eval("--root", root, "audit", "--validation-only", "--report", report, *extra,
                     columns=columns)
    no_traceback(result)
    return result


def test_the_default_suite_is_each_tasks_dev_workloads(toy_root, tmp_path):
    report = tmp_path / "r.jsonl"
    result = hf_eval("--root", toy_root, "audit", "--validation-only", "--report", report)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    dev = json.loads((toy_root / f"tasks/{DEF}.json").read_text())["dev"]
    assert [r["workload"] for r in read_report(report)] == dev


# ------------------------------------------------------------------ 1. an 80-column table
LONG_SOLUTION = "torch_toy_linear_solution_with_a_name_long_enough_to_wrap_twice_at_80"


def test_summary_table_fits_80_columns_and_names_are_whole(toy_root, tmp_path):
    write_json(toy_root / f"solutions/toy/{LONG_SOLUTION}.json",
               solution_json(LONG_SOLUTION, GOOD_SOLUTION))
    result = audit(toy_root, tmp_path / "r.jsonl", "--solutions", f"torch_toy,{LONG_SOLUTION}",
                   columns=80)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The table fits; the report line is printed whole (a path is not broken).
    assert max(len(line) for line in lines if not line.startswith("report: ")) <= 80, \
        result.stdout
    assert "…" not in result.stdout
    flat = name_column(result.stdout)
    assert f"{DEF}torch_toy{DEF}{LONG_SOLUTION}" in flat
    assert any(line.rstrip().endswith("_") for line in lines)  # the long name did wrap
    assert f"report: {tmp_path / 'r.jsonl'}  cases: 6  failed: 0" in result.stdout


def test_every_real_name_fits_80_columns_whole():
    """The rendering itself, on every definition and solution name of the repository."""
    from rich.console import Console

    from hf_eval.judge.report import print_summary
    from tests.kit import dataset

    statuses = ["PASSED", "INCORRECT_NUMERICAL", "TIMING_MISMATCH", "RUNTIME_ERROR",
                "DATA_ERROR", "TIMEOUT"]
    records = [{"definition": s.value.definition, "solution": s.value.name,
                "workload": f"w{i}", "status": status, "reason": "r",
                "timing": {"eager": {"median_ms": 12345.678}}}
               for s in dataset().solutions.values() for i, status in enumerate(statuses)]
    console = Console(width=80, record=True)
    print_summary(records, console)
    text = console.export_text()
    table = text.split("failed cases:", 1)[0]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "…" not in table
    flat = name_column(table)
    names = {n for rec in records for n in (rec["definition"], rec["solution"])}
    for rec in records:
        assert rec["definition"] + rec["solution"] in flat
    # Broken only after an underscore: every piece ends in one or ends a name.
    pieces = [m.group(1) for line in table.strip().splitlines()[4:-1]
              if (m := re.match(r"\s*([a-z0-9_]+)", line))]
    assert all(p.endswith("_") or any(n.endswith(p) for n in names) for p in pieces)
    assert "1 TIMING" in table and "1 NUMERICAL" in table


# ------------------------------------------------------------------ 2. why a solution is invalid
ESCAPE = ("solutions/toy/bad_toy.json: sources.0.path: source path must stay inside the "
          "package (no absolute path, no '..')")


def test_audit_names_the_invalid_solution_file_field_and_rule(toy_root, tmp_path):
    bad = solution_json("bad_toy", GOOD_SOLUTION)
    bad["sources"][0]["path"] = "../main.py"
    write_json(toy_root / "solutions/toy/bad_toy.json", bad)
    result = audit(toy_root, tmp_path / "r.jsonl", "--definitions", DEF, "--solutions",
                   "bad_toy")
    assert (result.returncode, result.stderr.strip()) == (2, f"error: {ESCAPE}")
    check = hf_eval("--root", toy_root, "check")
    assert (check.returncode, check.stdout.strip()) == (1, ESCAPE)


# ------------------------------------------------------------------ 3. check never writes
def test_check_reports_a_deleted_committed_blob_and_writes_nothing(toy_root):
    relpath = rows(toy_root)[0]["workload"]["inputs"]["x"]["path"]
    (toy_root / relpath).unlink()
    before = tree(toy_root)
    result = hf_eval("--root", toy_root, "check")
    no_traceback(result)
    assert result.returncode == 1
    assert result.stdout.strip() == (
        f"{relpath}: tensor file is missing: it is committed (not listed as regenerated in "
        f"its folder's .gitignore), and check never fetches or repairs (git checkout -- "
        f"{relpath}; or --lazy to skip)")
    assert result.stderr.strip().splitlines()[-1] == "check: 1 problem(s)"
    assert tree(toy_root) == before and not (toy_root / relpath).exists()


def test_a_flipped_byte_with_size_and_mtime_kept_fails_check_and_audit(toy_root, tmp_path):
    relpath = rows(toy_root)[0]["workload"]["inputs"]["x"]["path"]
    assert hf_eval("--root", toy_root, "check").returncode == 0  # verified, remembered
    path = toy_root / relpath
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    result = hf_eval("--root", toy_root, "check")
    no_traceback(result)
    assert result.returncode == 1
    assert re.fullmatch(rf"{re.escape(relpath)}: sha256 mismatch: file hashes to [0-9a-f]{{64}}, "
                        rf"expected {Path(relpath).stem}", result.stdout.strip()), result.stdout
    result = audit(toy_root, tmp_path / "r.jsonl", "--uuid", UUIDS[0])
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{relpath}: sha256 mismatch" in result.stdout + result.stderr


def test_check_rehash_trusts_no_remembered_hash(toy_root):
    relpath = rows(toy_root)[0]["workload"]["inputs"]["x"]["path"]
    assert hf_eval("--root", toy_root, "check").returncode == 0
    cache = Path(os.environ["HF_EVAL_CACHE"]) / "verified.json"
    verified = json.loads(cache.read_text())
    key = str((toy_root / relpath).resolve())
    verified[key][-1] = "f" * 64  # a record that lies: the file's identity, another hash
    cache.write_text(json.dumps(verified))
    lied = hf_eval("--root", toy_root, "check")
    assert lied.returncode == 1 and "file hashes to " + "f" * 64 in lied.stdout
    result = hf_eval("--root", toy_root, "check", "--rehash")
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == "check: 0 problem(s)"


def test_check_reports_an_lfs_pointer_and_does_not_fetch_it(toy_root):
    relpath = rows(toy_root)[0]["workload"]["inputs"]["x"]["path"]
    sha = Path(relpath).stem
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize 104\n"
    (toy_root / relpath).write_text(pointer)
    result = hf_eval("--root", toy_root, "check")
    no_traceback(result)
    assert (result.returncode, result.stdout.strip()) == (1, (
        f"{relpath}: tensor file is a Git LFS pointer with no content: check never fetches "
        f"(git lfs pull --include {relpath}; or --lazy)"))
    assert (toy_root / relpath).read_text() == pointer
    lazy = hf_eval("--root", toy_root, "check", "--lazy")
    assert (lazy.returncode, lazy.stderr.strip().splitlines()[0]) == (
        0, "note: 1 workload(s) not checked: tensors not present locally (--lazy)")


REAL = "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512"  # small regenerated tensors


def copy_definition(root: Path, name: str) -> list[str]:
    """A dataset root with one real definition: its files, and only its committed blobs.

    Returns the blob paths that are regenerated on first use (absent here, as in a clone).
    """
    definition = next((REPO / "definitions").rglob(f"{name}.json"))
    op_type = definition.parent.name
    for rel in (f"definitions/{op_type}/{name}.json", f"workloads/{op_type}/{name}.jsonl",
                f"tasks/{name}.json"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    for path in (REPO / "solutions").rglob("*.json"):
        if json.loads(path.read_text())["definition"] == name:
            target = root / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    audit = json.loads((REPO / "docs/interface-audit/interfaces.json").read_text())
    audit["definitions"] = [e for e in audit["definitions"] if e["definition"] == name]
    audit["counts"] = {audit["definitions"][0]["boundary"]: 1}
    audit["all_drop_in"] = audit["definitions"][0]["boundary"] != "structural_adapter_required"
    reading = json.loads((REPO / audit["wheel_reading"]).read_text())
    reading["entries"] = [e for e in reading["entries"] if e["definition"] == name]
    reading["simplifications"] = [s for s in reading.get("simplifications", [])
                                  if set(s.get("definitions", [])) <= {name}]
    (root / "docs/interface-audit").mkdir(parents=True)
    (root / "docs/interface-audit/interfaces.json").write_text(json.dumps(audit, indent=2))
    (root / audit["wheel_reading"]).write_text(json.dumps(reading, indent=2))
    receipts = [line for line in (REPO / "captures.jsonl").read_text().splitlines()
                if json.loads(line)["definition"] == name]
    (root / "captures.jsonl").write_text("\n".join(receipts) + "\n")
    blob = f"blob/workloads/{name}"
    ignore = (REPO / blob / ".gitignore").read_text().splitlines()
    (root / blob).mkdir(parents=True)
    for path in (REPO / blob).iterdir():
        if path.name not in ignore[1:]:
            shutil.copy(path, root / blob / path.name)
    return [f"{blob}/{n}" for n in ignore[1:]]


def test_check_verifies_regenerable_tensors_in_memory_without_writing(tmp_path):
    root = tmp_path / "ds"
    regenerable = copy_definition(root, REAL)
    assert regenerable and not any((root / p).exists() for p in regenerable)
    before = tree(root)
    result = hf_eval("--root", root, "check")
    no_traceback(result)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.strip().splitlines() == [
        f"note: {len(regenerable)} large sample tensor(s) not on disk were drawn in memory "
        "and verified, not written (as an audit does; --lazy skips them)",
        "check: 0 problem(s)"]
    assert tree(root) == before  # drawn and verified in memory, nothing written
    lazy = hf_eval("--root", root, "check", "--lazy")
    assert lazy.returncode == 0
    rows = [json.loads(line) for line in next(root.rglob(f"{REAL}.jsonl")).read_text()
            .splitlines()]
    absent = sum(any(d.get("path") in set(regenerable) for d in r["workload"]["inputs"].values())
                 for r in rows)
    assert 0 < absent < len(rows)
    assert lazy.stderr.strip().splitlines() == [
        f"note: {absent} workload(s) not checked: tensors not present locally (--lazy)",
        "check: 0 problem(s)"]


def test_an_audit_draws_absent_sample_tensors_in_memory_and_writes_nothing(tmp_path):
    root = tmp_path / "ds"
    regenerable = copy_definition(root, REAL)
    before = tree(root)
    report = tmp_path / "audit.jsonl"
    result = hf_eval("--root", root, "audit", "--validation-only", "--report", report)
    no_traceback(result)
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree(root) == before  # not one tensor written into the dataset
    drawn = re.findall(r"^drawing (\d+) sample tensor\(s\) of workload (\S+) "
                       rf"\({REAL}\) in memory from its generator, verified, not written: ",
                       result.stderr, re.M)
    dev = json.loads((root / f"tasks/{REAL}.json").read_text())["dev"]
    rows = {r["workload"]["uuid"]: r for r in map(json.loads, next(
        root.rglob(f"{REAL}.jsonl")).read_text().splitlines())}
    uses = {u for u in dev if any(d.get("path") in set(regenerable)
                                  for d in rows[u]["workload"]["inputs"].values())}
    assert uses and {u for _, u in drawn} == uses
    assert all(r["status"] == "PASSED" for r in read_report(report))


def test_check_reports_a_generator_that_no_longer_reproduces(tmp_path):
    root = tmp_path / "ds"
    regenerable = copy_definition(root, REAL)
    wrong = f"blob/workloads/{REAL}/{'0' * 64}.safetensors"
    path = next(root.rglob(f"{REAL}.jsonl"))
    text = path.read_text().replace(regenerable[0], wrong)
    path.write_text(text)
    with open(root / f"blob/workloads/{REAL}/.gitignore", "a") as fh:
        fh.write(f"{'0' * 64}.safetensors\n")
    result = hf_eval("--root", root, "check")
    no_traceback(result)
    assert result.returncode == 1
    (line,) = [p for p in result.stdout.splitlines() if p.startswith(wrong)]
    assert re.fullmatch(rf"{wrong}: regenerated tensor hashes to [0-9a-f]{{64}}, not the "
                        r"recorded hash: the generator no longer reproduces this sample", line)
    assert not (root / wrong).exists()


# ------------------------------------------------------------------ 4. memory: mapped, not read
def test_a_mapped_tensor_equals_the_read_one_and_never_writes_its_file(tmp_path):
    store = TensorStore(tmp_path)
    desc = store.write(torch.arange(24, dtype=torch.float32).reshape(4, 6), "blob/t", "w")
    path = tmp_path / desc.path
    digest = sha256_file(path)
    mapped = tensorfile.read(path, "w", mapped=True)
    assert torch.equal(mapped, tensorfile.read(path, "w"))
    mapped.fill_(0)  # copy-on-write: the file keeps its bytes
    assert sha256_file(path) == digest == tensorfile.sha256("w", tensorfile.read(path, "w"))


# ------------------------------------------------------------------ 5. data errors: shown, exit 2
def test_a_data_error_is_shown_with_its_reason_and_exits_2(toy_root, tmp_path):
    relpath = rows(toy_root)[0]["workload"]["inputs"]["x"]["path"]
    (toy_root / relpath).unlink()
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report, "--uuid", UUIDS[0])
    (record,) = read_report(report)
    assert record["status"] == "DATA_ERROR" and relpath in record["reason"]
    assert result.returncode == 2
    assert f"DATA_ERROR: {DEF}: workload {UUIDS[0]}: {record['reason']}" in result.stdout


def test_a_candidate_failure_exits_1_with_its_reason(toy_root, tmp_path):
    write_json(toy_root / "solutions/toy/wrong.json", solution_json("wrong", GOOD_SOLUTION
               .replace("* scale", "* scale * 2")))
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report, "--uuid", UUIDS[1], "--solutions", "wrong")
    (record,) = read_report(report)
    assert record["status"] == "INCORRECT_NUMERICAL"
    assert result.returncode == 1
    assert (f"INCORRECT_NUMERICAL: {DEF} / wrong: workload {UUIDS[1]}: {record['reason']}"
            in result.stdout)


# ------------------------------------------------------------------ 6. a wrong axis value
def wrong_axis(root: Path) -> str:
    found = rows(root)
    found[0]["workload"]["axes"]["M"] = 5  # its x tensor has 1 row
    write_rows(root, found)
    x = found[0]["workload"]["inputs"]["x"]["path"]
    return (f"{WL}:1: workload.axes.M: is 5, but input 'x' ({x}) has 1 along M "
            "(shape (1, 16), declared ['M', 'K'])")


def test_a_wrong_axis_is_blamed_on_the_workload_line_and_axis(toy_root, tmp_path):
    expected = wrong_axis(toy_root)
    check = hf_eval("--root", toy_root, "check")
    assert (check.returncode, check.stdout.strip()) == (1, expected)
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report, "--uuid", UUIDS[0])
    assert result.returncode == 2
    assert read_report(report)[0]["reason"] == expected


# ------------------------------------------------------------------ 7. messages, not tracebacks
def test_summarize_a_missing_report(tmp_path):
    result = hf_eval("summarize", tmp_path / "nope.jsonl", "--out", tmp_path / "out")
    no_traceback(result)
    assert (result.returncode, result.stderr.strip()) == (
        2, f"error: {tmp_path / 'nope.jsonl'}: report not found")


def passed_report(toy_root: Path, tmp_path: Path) -> Path:
    report = tmp_path / "r.jsonl"
    assert audit(toy_root, report).returncode == 0
    assert len(read_report(report)) == 3
    return report


def _summarized(report: Path, tmp_path: Path):
    """``hf_eval summarize`` of ``report`` into tmp_path/out, which must succeed without a
    traceback."""
    result = hf_eval("summarize", report, "--out", tmp_path / "out")
    no_traceback(result)
    assert result.returncode == 0
    return result


def tear_last_line(report: Path) -> None:
    data = report.read_bytes()
    report.write_bytes(data[:-40])  # an interrupted write: no newline, half a record


def test_summarize_skips_exactly_a_torn_last_line_with_a_note(toy_root, tmp_path):
    report = passed_report(toy_root, tmp_path)
    tear_last_line(report)
    result = _summarized(report, tmp_path)
    assert result.stderr.strip() == (f"note: {report}:3: ignored a torn last line (an "
                                     "interrupted write); that case is not summarized")
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["definitions"][DEF]["solutions"]["torch_toy"]["audited"] == 2


def test_a_torn_line_in_the_middle_is_an_error_naming_file_and_line(toy_root, tmp_path):
    report = passed_report(toy_root, tmp_path)
    lines = report.read_text().splitlines(keepends=True)
    lines[1] = lines[1][:30] + "\n"
    report.write_text("".join(lines))
    result = hf_eval("summarize", report, "--out", tmp_path / "out")
    no_traceback(result)
    assert result.returncode == 2
    assert re.fullmatch(rf"error: {re.escape(str(report))}:2: malformed JSON: .+ \(only a torn "
                        r"last line, left by an interrupted write, is skipped\)",
                        result.stderr.strip())
    resume = audit(toy_root, report, "--resume")
    assert (resume.returncode, resume.stderr.strip()) == (2, result.stderr.strip())


def test_resume_drops_a_torn_last_line_and_redoes_that_case(toy_root, tmp_path):
    report = passed_report(toy_root, tmp_path)
    last = read_report(report)[-1]["workload"]
    tear_last_line(report)
    result = audit(toy_root, report, "--resume")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (f"note: {report}:3: dropped a torn last line "
                                             "(an interrupted write); that case is audited "
                                             "again")
    records = read_report(report)
    assert [r["workload"] for r in records] == UUIDS[:2] + [last]
    assert {r["status"] for r in records} == {"PASSED"}


SKIPPED_RULE = ("status: must be one of PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, "
                "INCORRECT_DTYPE, RUNTIME_ERROR, COMPILE_ERROR, TIMEOUT, DATA_ERROR "
                "(got 'SKIPPED')")


def skip_second_line(report: Path) -> None:
    """Rewrite the report's second record with a status no harness writes."""
    lines = report.read_text().splitlines(keepends=True)
    second = json.loads(lines[1])
    second["status"] = "SKIPPED"
    second["reason"] = "\x1b[2J\x1b[H all passed"
    lines[1] = json.dumps(second) + "\n"
    report.write_text("".join(lines))


def test_summarize_lists_an_invalid_record_and_counts_it_as_failed(toy_root, tmp_path):
    report = passed_report(toy_root, tmp_path)
    skip_second_line(report)
    result = _summarized(report, tmp_path)
    assert result.stderr.splitlines() == [
        f"note: {report}:2: not a valid record: {SKIPPED_RULE}; counted as a failed case of "
        "torch_toy"]
    row = json.loads((tmp_path / "out/summary.json").read_text())["definitions"][DEF][
        "solutions"]["torch_toy"]
    assert (row["passed"], row["audited"], row["invalid"]) == (2, 2, 1)
    assert row["unranked"] == "failed 1 of 3 workloads (1 invalid record)"


def test_resume_audits_the_case_of_an_invalid_record_again(toy_root, tmp_path):
    report = passed_report(toy_root, tmp_path)
    skip_second_line(report)
    result = audit(toy_root, report, "--resume")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"note: {report}:2: not a valid record: {SKIPPED_RULE}; that case is not done and is "
        "audited again")
    assert "\x1b" not in result.stdout + result.stderr
    assert [r["workload"] for r in read_report(report)] == [UUIDS[0], UUIDS[2], UUIDS[1]]
    assert "Audit summary: 3/3 cases passed" in result.stdout


# ------------------------------------------------------------------ 8. where state lives
def test_the_manual_says_where_state_lives():
    manual = (REPO / "docs/manual.md").read_text()
    section = manual.split("## Where state lives", 1)[1].split("\n## ", 1)[0]
    for needle in ("~/.cache/inference-kernels", "HF_EVAL_CACHE", "references/",
                   "private directory", "verified.json", "blob/", "reports/", "peak"):
        assert needle in section, needle


# ------------------------------------------------------------------ 9. small inconsistencies
def test_usage_line_says_how_the_cli_was_run():
    result = hf_eval("--help", columns=80)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m hf_eval ")
    assert "``" not in result.stdout and "exit status:" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    script = Path(sys.executable).parent / "hf-eval"
    if not script.exists():
        pytest.skip("the hf-eval console script is not installed")
    import subprocess

    usage = subprocess.run([str(script), "--help"], capture_output=True, text=True).stdout
    assert usage.startswith("usage: hf-eval ")


def test_exit_codes_are_documented_in_help_and_readme():
    help_text = hf_eval("--help").stdout
    readme = (REPO / "README.md").read_text()
    for code, meaning in (("0", "every case passed"), ("1", "a candidate failed"),
                          ("2", "bad input or data")):
        assert re.search(rf"^\s+{code}\s+{meaning}", help_text, flags=re.M), code
        assert f"| {code} | {meaning}" in readme, code


def test_list_definitions_solutions_and_suites(toy_root):
    definitions = hf_eval("--root", toy_root, "list", "definitions")
    assert (definitions.returncode, definitions.stdout) == (0, f"{DEF}  3 workloads\n")
    solutions = hf_eval("--root", toy_root, "list", "solutions")
    assert solutions.stdout == f"{DEF}\n  torch_toy  cpu  preferred cpu  baseline\n"
    names = hf_eval("--root", toy_root, "list", "solutions", "--names")
    assert names.stdout == "torch_toy\n"
    suites = hf_eval("--root", toy_root, "list", "suites")
    assert suites.stdout.splitlines()[:2] == [
        "sample  3 workloads: the generated sample (here: every workload)",
        "first   1 workload: the first line of each workload file: a smoke test"]
    wrong_root = hf_eval("--root", toy_root / "nope", "list", "definitions")
    assert (wrong_root.returncode, wrong_root.stderr.strip()) == (
        2, f"error: {toy_root / 'nope'}: not a dataset root: it has no definitions/ "
        "directory (see --root)")


def test_uuid_and_definitions_take_commas_and_repeats(toy_root, tmp_path):
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report, "--definitions", DEF, "--definitions", DEF,
                   "--uuid", f"{UUIDS[0]},{UUIDS[2]}", "--uuid", UUIDS[1])
    assert result.returncode == 0, result.stderr
    assert sorted(r["workload"] for r in read_report(report)) == UUIDS


def test_a_selection_of_no_case_exits_2(toy_root, tmp_path):
    result = audit(toy_root, tmp_path / "r.jsonl", "--uuid", "no-such-uuid")
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (
        2, "error: the selection matches no case (see 'list definitions', 'list suites' and "
        "the --uuid values)")


def test_suite_first_is_explained_in_help():
    text = re.sub(r"\s+", " ", hf_eval("audit", "--help").stdout)
    assert "first = the first line of each definition's workload file, a quick smoke test" \
        in text


def summarize_text(tmp_path: Path, records: list[dict]) -> str:
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = hf_eval("summarize", report, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    return (tmp_path / "out/performance.md").read_text()


def record(solution: str, ms: float) -> dict:
    return {"definition": DEF, "device": "cpu", "solution": solution, "workload": UUIDS[0],
            "status": "PASSED", "baseline": "torch_toy", "baseline_timed": "call",
            "timing": {"eager": {"median_ms": ms}}}


def test_speedup_column_is_explained_when_only_the_baseline_ran(tmp_path):
    text = summarize_text(tmp_path, [record("torch_toy", 2.0)])
    assert "speed-up" not in text.split("| definition", 1)[1]
    assert "No speed-ups: in these reports no solution was timed on the same workloads as " \
           "its task's baseline." in text
    assert text.endswith("|\n") and not text.endswith("\n\n")


def test_speedup_column_when_a_solution_is_paired_with_its_baseline(tmp_path):
    text = summarize_text(tmp_path, [record("torch_toy", 2.0), record("fast", 1.0)])
    assert f"| {DEF} | fast | 1/1 | 1.000 | 2.00× (2.00–2.00), 1/1 vs torch_toy | 1 |" in text
    assert f"| {DEF} | torch_toy | 1/1 | 2.000 | baseline | 2 |" in text
    assert text.endswith("|\n") and not text.endswith("\n\n")


def test_a_dev_uuid_that_names_no_workload_is_an_error_everywhere(toy_root, tmp_path):
    task_file = toy_root / f"tasks/{DEF}.json"
    task = json.loads(task_file.read_text())
    ghost = "99999999-9999-9999-9999-999999999999"
    task["dev"] = task["dev"][:1] + [ghost]
    task_file.write_text(json.dumps(task))
    message = f"tasks/{DEF}.json: dev: dev UUID {ghost} is not a workload of {DEF}"
    for command in (("audit", "--validation-only", "--report", str(tmp_path / "r.jsonl")),
                    ("list", "suites"), ("check",)):
        result = hf_eval("--root", toy_root, *command)
        no_traceback(result)
        out = result.stdout + result.stderr
        assert message in out, (command, out)
        assert result.returncode == (1 if command == ("check",) else 2), (command, out)
    assert not (tmp_path / "r.jsonl").exists() or not (tmp_path / "r.jsonl").read_text()


def test_a_dev_workload_outside_the_published_domain_is_refused(toy_root, tmp_path):
    """A receipt labelled outside the published domain: naming its workload in ``dev`` is
    an error of the task for check and the audit; the same workload held out is fine."""
    captures = toy_root / "captures.jsonl"
    lines = [json.loads(line) for line in captures.read_text().splitlines()]
    task = json.loads((toy_root / f"tasks/{DEF}.json").read_text())
    outside = next(line for line in lines if line["uuid"] in task["dev"])
    outside["provenance"]["outside_domain"] = "a stress test no published workload holds"
    captures.write_text("".join(json.dumps(line) + "\n" for line in lines))
    message = (f"tasks/{DEF}.json: dev: dev UUID {outside['uuid']} is outside the published "
               "domain")
    for command in (("audit", "--validation-only", "--report", str(tmp_path / "r.jsonl")),
                    ("check",)):
        result = hf_eval("--root", toy_root, *command)
        no_traceback(result)
        out = result.stdout + result.stderr
        assert message in out, (command, out)
        assert result.returncode == (1 if command == ("check",) else 2), (command, out)
    task["dev"] = [line["uuid"] for line in lines if line["uuid"] != outside["uuid"]][:1]
    (toy_root / f"tasks/{DEF}.json").write_text(json.dumps(task))
    result = hf_eval("--root", toy_root, "check")
    assert "outside the published domain" not in result.stdout + result.stderr, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_device_cuda_without_cuda_is_one_line(toy_root, tmp_path):
    result = hf_eval("--root", toy_root, "audit", "--device", "cuda", "--report",
                     tmp_path / "r.jsonl")
    no_traceback(result)
    assert result.returncode == 2
    assert re.fullmatch(r"error: --device cuda: this machine has no usable CUDA device "
                        r"\(torch \S+, built .+\); use --device cpu", result.stderr.strip())


def test_an_unwritable_report_is_one_line_before_any_work(toy_root, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = hf_eval("--root", toy_root, "audit", "--report", blocker / "r.jsonl")
    no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: --report {blocker / 'r.jsonl'}: {blocker} is a "
                                     "file, not a folder")
    (tmp_path / "locked").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        result = hf_eval("--root", toy_root, "audit", "--report", tmp_path / "locked/r.jsonl")
        assert (result.returncode, result.stderr.strip()) == (2, (
            f"error: --report {tmp_path / 'locked/r.jsonl'}: its folder is not writable"))


def test_listing_solutions_of_an_unknown_definition_is_an_error(toy_root):
    result = hf_eval("--root", toy_root, "list", "solutions", "--definitions", "nosuchdef")
    no_traceback(result)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == ("error: --definitions: unknown definition(s) "
                                     "'nosuchdef' (see 'list definitions')")


def test_resume_with_other_flags_than_the_report_is_an_error(toy_root, tmp_path):
    report = tmp_path / "r.jsonl"
    first = audit(toy_root, report, "--uuid", UUIDS[0])  # --validation-only
    assert first.returncode == 0, first.stderr
    before = report.read_text()
    result = hf_eval("--root", toy_root, "audit", "--suite", "sample", "--report", report,
                     "--resume")
    no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {report}: flags: record 1 was written with --validation-only: --resume "
        "needs the flags the report was written with")
    assert report.read_text() == before


def test_a_named_solution_of_another_definition_is_an_error(toy_root, tmp_path):
    other = json.loads((toy_root / "solutions/toy/torch_toy.json").read_text())
    other["name"], other["definition"] = "torch_other", "other_definition"
    write_json(toy_root / "solutions/toy/torch_other.json", other)
    result = hf_eval("--root", toy_root, "audit", "--definitions", DEF, "--solutions",
                     "torch_toy,torch_other", "--report", tmp_path / "r.jsonl")
    no_traceback(result)
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (2, (
        "error: --solutions: 'torch_other' is a solution of other_definition, which is not "
        "among --definitions"))
    result = hf_eval("--root", toy_root, "audit", "--definitions", DEF, "--solutions",
                     "ghost", "--report", tmp_path / "r.jsonl")
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (2, (
        "error: --solutions: unknown solution 'ghost' (see 'list solutions')"))


def test_a_raising_reference_is_that_definitions_data_error_and_the_audit_goes_on(
        toy_root, tmp_path):
    definition_file = toy_root / f"definitions/toy/{DEF}.json"
    definition = json.loads(definition_file.read_text())
    definition["reference"] = definition["reference"].replace(
        "def run(", "def _unused(") + "\n\ndef run(*args):\n    raise ValueError('broken')\n"
    definition_file.write_text(json.dumps(definition))
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report)
    assert result.returncode == 2, result.stdout + result.stderr
    records = read_report(report)
    assert len(records) == 3 and {r["status"] for r in records} == {"DATA_ERROR"}
    assert all(re.fullmatch(rf"definitions/toy/{DEF}.json: the reference raised ValueError: "
                            r"broken \(at <reference of \w+>:\d+\)", r["reason"])
               for r in records), records[0]["reason"]
    assert "Traceback" not in result.stderr and "--resume" not in result.stderr


def test_a_bad_workload_file_or_solution_is_refused_and_the_rest_runs(toy_root, tmp_path):
    extra = toy_root / "workloads/toy/extra.jsonl"
    extra.write_text(json.dumps(rows(toy_root)[0]) + "\n{not json\n")
    broken = solution_json("torch_broken", GOOD_SOLUTION)
    broken["spec"]["entry_point"] = "kernel.py::run"  # no such source
    write_json(toy_root / "solutions/toy/torch_broken.json", broken)
    report = tmp_path / "r.jsonl"
    result = audit(toy_root, report, "--solutions", "all")
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2, result.stderr
    assert errors[0].startswith("error: solutions/toy/torch_broken.json: ")
    assert "entry file 'kernel.py' is not among the sources" in errors[0]
    assert errors[1].startswith("error: workloads/toy/extra.jsonl:2: ")
    records = read_report(report)
    assert [(r["solution"], r["workload"], r["status"]) for r in records] == [
        ("torch_toy", uuid, "PASSED") for uuid in UUIDS]  # the good file, the good solution
    assert result.returncode == 2


def _audit_with_a_candidate_that_never_loads(toy_root, tmp_path) -> tuple[subprocess.Popen,
                                                                          Path]:
    """An audit (a process of its own) whose only candidate sleeps at import; returned once
    that candidate's worker is up."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    candidate = tmp_path / "stuck" / "main.py"
    candidate.parent.mkdir()
    candidate.write_text("import time\ntime.sleep(600)\n\n\ndef run(x, w, scale):\n"
                         "    raise AssertionError('never imported')\n")
    env = {**os.environ, "TMPDIR": str(private_tmp), "PYTHONPATH": python_path()}
    process = subprocess.Popen(
        [sys.executable, "-m", "hf_eval", "--root", str(toy_root), "audit", "--definitions",
         DEF, "--candidate", str(candidate), "--suite", "first",
         "--report", str(tmp_path / "r.jsonl")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(_descendants(process.pid)) < 3:  # the spawner, the worker's two processes
        assert process.poll() is None and time.monotonic() < deadline, process.poll()
        time.sleep(0.05)
    time.sleep(2.0)  # up, and asked to load the candidate
    return process, private_tmp


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat_file.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def test_ctrl_c_reaches_a_worker_that_is_still_loading(toy_root, tmp_path):
    """Ctrl-C while a candidate's import stalls: the worker being loaded is killed too, so
    the audit ends at once (130), not when the load's own timeout runs out."""
    process, private_tmp = _audit_with_a_candidate_that_never_loads(toy_root, tmp_path)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)  # the load's own limit is 120 s
    assert "Traceback" not in err, err
    assert process.returncode == 130, err
    assert not list(private_tmp.glob("hf-eval-worker-*"))


def test_no_worker_outlives_an_audit_killed_outright(toy_root, tmp_path):
    """SIGKILL of the audit process (no cleanup of its own can run): its spawner sees the
    control socket close and kills every worker it forked, then exits."""
    process, _ = _audit_with_a_candidate_that_never_loads(toy_root, tmp_path)
    below = _descendants(process.pid)
    assert len(below) >= 2, below  # the spawner and the worker at least
    process.kill()
    process.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while (left := {p for p in below if Path(f"/proc/{p}").exists()
                    and "State:\tZ" not in Path(f"/proc/{p}/status").read_text()}):
        assert time.monotonic() < deadline, f"still alive after the audit was killed: {left}"
        time.sleep(0.1)


def _audit_with_a_spinning_second_candidate(toy_root, tmp_path) -> subprocess.Popen:
    """An audit (a process of its own) of two honest candidates, then one that spins at
    import, returned once its worker spins beside the stand-in (so the spawner holds
    more than one worker, the stand-in forked before the spinner's)."""
    spinner = tmp_path / "spin" / "main.py"
    spinner.parent.mkdir()
    spinner.write_text("while True:\n    pass\n")
    env = {**os.environ, "PYTHONPATH": python_path()}
    process = subprocess.Popen(
        [sys.executable, "-m", "hf_eval", "--root", str(toy_root), "audit", "--definitions",
         DEF, *[arg for _ in range(2) for arg in
                ("--candidate", str(REPO / "tests/adversarial/honest/main.py"))],
         "--candidate", str(spinner), "--suite", "first", "--report", str(tmp_path / "r.jsonl")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    report = tmp_path / "r.jsonl"
    while (len(report.read_text().splitlines()) if report.exists() else 0) < 2 or len(
            _descendants(process.pid)) < 5:
        # the honest ones' records written; the spawner, the stand-in's and the
        # spinner's two processes each
        assert process.poll() is None and time.monotonic() < deadline, process.poll()
        time.sleep(0.05)
    time.sleep(2.0)  # spinning
    return process


def _all_end(pids: set[int], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while (left := {p for p in pids if Path(f"/proc/{p}").exists()
                    and "State:\tZ" not in Path(f"/proc/{p}/status").read_text()}):
        assert time.monotonic() < deadline, f"still alive: {left}"
        time.sleep(0.1)


def test_no_worker_outlives_its_spawner_killed_outright(toy_root, tmp_path):
    """SIGKILL of the spawner (the OOM killer's pick, say): no code of its own runs, yet
    every worker it forked dies with it, a spinning candidate included (the audit itself
    lives on, and would wait for its call's timeout)."""
    process = _audit_with_a_spinning_second_candidate(toy_root, tmp_path)
    try:
        spawners = [p for p in _descendants(process.pid)  # the audit's child of that name
                    if b"hf_eval.isolation.spawner" in Path(f"/proc/{p}/cmdline").read_bytes()
                    and int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1])
                    == process.pid]
        assert len(spawners) == 1, spawners
        workers = _descendants(spawners[0])
        assert len(workers) >= 4, workers
        os.kill(spawners[0], signal.SIGKILL)
        _all_end(workers, seconds=30)
    finally:
        process.kill()
        process.communicate(timeout=60)


def test_no_worker_outlives_its_audit_and_spawner_killed_while_it_is_frozen(toy_root,
                                                                          tmp_path):
    """SIGKILL of the audit and its spawner together (a whole process tree killed) while
    the candidate's group is frozen, as it is whenever the stand-in is timed: a frozen
    cgroup v1 task acts on no signal until thawed, so the worker's own outer process
    thaws it and kills it."""
    from hf_eval.isolation.limits import Group

    process, _ = _audit_with_a_candidate_that_never_loads(toy_root, tmp_path)
    try:
        groups = [p for p in Path("/sys/fs/cgroup").rglob(f"hf-eval-worker-{process.pid}-*")
                  if p.is_dir()]
        if not groups:
            pytest.skip("no worker groups on this host")
        # the memory group first: its members are every process of the worker
        files = sorted({str(p / "cgroup.procs") for p in groups}, key=lambda f: (
            "memory" not in Path(f).parts, f))
        group = Group.of_join_files(files)
        workers = set(group.members())
        assert workers and group.freeze()
        below = _descendants(process.pid)
        spawner = [p for p in below - workers if p not in
                   {c for w in workers for c in _descendants(w)}]
        for pid in [process.pid, *spawner]:
            os.kill(pid, signal.SIGKILL)
        process.communicate(timeout=60)
        _all_end(workers | below, seconds=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=60)


def test_ctrl_c_exits_130_and_leaves_no_worker_directory(toy_root, tmp_path):
    """Ctrl-C while a candidate's worker is up: exit 130, 'interrupted', every worker's
    directory removed, and the report holds whole records only."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(private_tmp), "PYTHONPATH": python_path()}
    report = tmp_path / "r.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "hf_eval", "--root", str(toy_root), "audit", "--definitions",
         DEF, "--candidate", str(REPO / "tests/adversarial/slow_honest/main.py"), "--suite",
         "sample", "--report", str(report)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(private_tmp.glob("hf-eval-worker-*")):  # a worker is up
        assert process.poll() is None and time.monotonic() < deadline, process.poll()
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert not list(private_tmp.glob("hf-eval-worker-*"))
    for record in read_report(report) if report.exists() else []:
        assert record["status"] == "PASSED", record
