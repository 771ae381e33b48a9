"""Receipts in the published format (``captures.jsonl``), read and written unchanged.

A tiny dataset laid out as the published one: definitions, workload lines, content-addressed
tensors and receipts joining each workload UUID to what the capture recorded. A receipt
needs only ``uuid`` and ``definition``; ``expected_output`` (the engine's own output) is one
descriptor for a single-output definition or a dict by output name, and is absent for an
imported workload (judged against the reference only); keys of the capture's own (model
revision, request, engine operation, validation) are kept byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_eval.capture.interop import export_fib
from hf_eval.checker import run_check
from hf_eval.cli import main
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Receipt, load_jsonl, parse_json_line
from hf_eval.data.store import TensorStore
from hf_eval.dataset import open_dataset
from hf_eval.hub.card import captures_file
from hf_eval.hub.rows import workload_row
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.records import exit_code
from hf_eval.judge.report import read_report
from tests.conftest import GOOD_SOLUTION, TOY_DEFINITION, solution_json, write_json

PAIR = TOY_DEFINITION["name"]  # two outputs: y and positive_rows
SINGLE = "toy_linear_y_n8_k16"  # the same operator, y only
SINGLE_DEFINITION = {
    **TOY_DEFINITION, "name": SINGLE,
    "outputs": {"y": TOY_DEFINITION["outputs"]["y"]},
    "reference": TOY_DEFINITION["reference"].replace(
        ", (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)", ""),
}
SINGLE_SOLUTION = GOOD_SOLUTION.replace(
    ", (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)", "")

CAPTURED_PAIR = "11111111-0000-0000-0000-000000000001"
CAPTURED_SINGLE = "11111111-0000-0000-0000-000000000002"
IMPORTED = "11111111-0000-0000-0000-000000000003"
NOTE = ("toy_linear_n8_k16: 1 receipt(s) have no expected_output (no engine output to "
        "replay; judged against the reference only)")


def reference_outputs(x: torch.Tensor, w: torch.Tensor, scale: float):
    y = scale * (x.float() @ w.float().T)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def dumps(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def build_published(tmp_path: Path) -> Path:
    """The published layout: definitions/<op_type>/, workloads/<op_type>/, blob/, receipts."""
    root = tmp_path / "published"
    store = TensorStore(root)
    gen = torch.Generator().manual_seed(1)
    lines: dict[str, list[str]] = {PAIR: [], SINGLE: []}
    receipts = []
    for name, definition, source in ((PAIR, TOY_DEFINITION, GOOD_SOLUTION),
                                     (SINGLE, SINGLE_DEFINITION, SINGLE_SOLUTION)):
        write_json(root / f"definitions/toy/{name}.json", definition)
        write_json(root / f"solutions/toy/torch_{name}.json",
                   solution_json(f"torch_{name}", source, definition=name))
    blob = "blob/workloads"
    w = torch.randn(8, 16, generator=gen).bfloat16()
    for uuid, name, m in ((CAPTURED_PAIR, PAIR, 5), (CAPTURED_SINGLE, SINGLE, 3),
                          (IMPORTED, PAIR, 2)):
        x = torch.randn(m, 16, generator=gen).bfloat16()
        inputs = {"x": store.write(x, f"{blob}/{name}", "x").model_dump(),
                  "w": store.write(w, f"{blob}/{name}", "w").model_dump(),
                  "scale": {"type": "scalar", "value": 0.5}}
        lines[name].append(json.dumps({"definition": name, "workload": {
            "uuid": uuid, "axes": {"M": m}, "inputs": inputs}, "solution": None,
            "evaluation": None}))
        y, positive = reference_outputs(x, w, 0.5)
        if uuid == CAPTURED_SINGLE:  # only the required keys and one descriptor
            receipts.append(dumps({"uuid": uuid, "definition": name, "expected_output":
                                   store.write(y, f"{blob}/{name}", "output").model_dump()}))
        elif uuid == CAPTURED_PAIR:  # keys of the capture's own, in its order; a dict;
            receipts.append(json.dumps({  # json.dumps's own style (spaces, ASCII escapes)
                "model_revision": "Qwen/Qwen3-Next@0123abc", "uuid": uuid,
                "request": {"prompt_tokens": 5, "temperature": 0.0, "text": "Grüße"},
                "definition": name, "engine_operation": "sglang.linear:forward",
                "adaptations": [{"input": "x", "from": [1, 5, 16], "to": [5, 16]}],
                "expected_output": {
                    "y": store.write(y, f"{blob}/{name}", "y").model_dump(),
                    "positive_rows": store.write(positive, f"{blob}/{name}",
                                                 "positive_rows").model_dump()},
                "validation": {"engine_replay": {"max_abs_error": 1.5e-05}}}))
        else:  # imported: no engine output, no provenance kind
            receipts.append(dumps({
                "uuid": uuid, "definition": name,
                "provenance": {"source": "mlsys26-contest", "source_workload": "w-7"},
                "validation": {"reference": "finite outputs of the declared shapes"}}))
    for name, rows in lines.items():
        path = root / f"workloads/toy/{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(row + "\n" for row in rows))
        write_json(root / f"tasks/{name}.json", {
            "definition": name, "workloads": [f"workloads/toy/{name}.jsonl"],
            "tolerance": {"atol": 0.005, "rtol": 0.016},
            "baseline": {"solution": f"torch_{name}", "timed": "call"}})
    (root / "captures.jsonl").write_text("".join(line + "\n" for line in receipts))
    return root


@pytest.fixture
def published(tmp_path: Path) -> Path:
    return build_published(tmp_path)


def replace_receipt(root: Path, uuid: str, change) -> None:
    path = root / "captures.jsonl"
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        data = json.loads(line)
        out.append(json.dumps(change(data)) if data["uuid"] == uuid else line)
    path.write_text("".join(line + "\n" for line in out))


def line_of(root: Path, uuid: str) -> int:
    lines = (root / "captures.jsonl").read_text().splitlines()
    return next(i for i, t in enumerate(lines, start=1) if json.loads(t)["uuid"] == uuid)


# ------------------------------------------------------------------------------- reading
def test_check_accepts_the_published_layout(published, capsys):
    assert main(["--root", str(published), "check"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "check: 0 problem(s)\n"


def test_receipts_need_only_uuid_and_definition(published):
    ds = open_dataset(published)
    assert ds.problems == []
    single = ds.receipts[CAPTURED_SINGLE]
    assert single.value.provenance is None and single.value.kind is None
    assert list(ds.engine_outputs(single)) == ["y"]  # one descriptor: the single output
    pair = ds.receipts[CAPTURED_PAIR]
    assert list(ds.engine_outputs(pair)) == ["y", "positive_rows"]
    assert pair.value.model_extra["engine_operation"] == "sglang.linear:forward"
    imported = ds.receipts[IMPORTED]
    assert ds.engine_outputs(imported) is None
    assert imported.value.provenance.model_extra["source_workload"] == "w-7"


def test_every_receipt_round_trips_byte_for_byte(published):
    path = published / "captures.jsonl"
    text = path.read_text()
    lines = text.splitlines()
    assert '"model_revision": "Qwen/Qwen3-Next@0123abc", "uuid": ' in text
    assert "Gr\\u00fc\\u00dfe" in text
    again = [parse_json_line(Receipt, line, path, n).to_line(like=line)
             for n, line in enumerate(lines, start=1)]
    assert again == lines
    compact = [line for line in lines if '", "' not in line]
    assert len(compact) == 2
    assert [r.to_line() for r in load_jsonl(Receipt, path) if r.uuid != CAPTURED_PAIR] == compact
    ds = open_dataset(published)
    assert [ds.receipts[json.loads(t)["uuid"]].text for t in lines] == lines


def test_replay_replays_exactly_the_receipts_with_engine_outputs(published, capsys):
    before = (published / "captures.jsonl").read_text().splitlines()
    assert main(["--root", str(published), "replay"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{PAIR} {CAPTURED_PAIR}: PASSED",
        f"{SINGLE} {CAPTURED_SINGLE}: PASSED",
        NOTE,
        "replay: 2 replayed, 0 failed, 1 without an engine output"]
    after = (published / "captures.jsonl").read_text().splitlines()
    assert len(after) == len(before)
    imported = line_of(published, IMPORTED) - 1
    assert after[imported] == before[imported]  # untouched line: the same bytes
    for uuid in (CAPTURED_PAIR, CAPTURED_SINGLE):
        n = line_of(published, uuid) - 1
        old, new = json.loads(before[n]), json.loads(after[n])
        assert list(new) == list(old) + ([] if "validation" in old else ["validation"])
        assert new["validation"]["replay"]["status"] == "PASSED"
        assert {k: v for k, v in new.items() if k != "validation"} == {
            k: v for k, v in old.items() if k != "validation"}
        if "validation" in old:  # the capture's own results stay beside the replay's
            assert new["validation"]["engine_replay"] == old["validation"]["engine_replay"]
    assert run_check(published) == ([], [])


def test_a_wrong_engine_output_fails_replay(published, capsys):
    ds = open_dataset(published)
    good = ds.store.load(ds.receipts[CAPTURED_SINGLE].value.expected_output)
    wrong = ds.store.write(good * 2, f"blob/workloads/{SINGLE}", "output")
    replace_receipt(published, CAPTURED_SINGLE,
                    lambda r: {**r, "expected_output": wrong.model_dump()})
    (published / ds.receipts[CAPTURED_SINGLE].value.expected_output.path).unlink()
    assert run_check(published) == ([], [])  # check judges files, not values
    assert main(["--root", str(published), "replay", "--no-write"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{PAIR} {CAPTURED_PAIR}: PASSED"
    assert out[1].startswith(f"{SINGLE} {CAPTURED_SINGLE}: FAILED (y: ")
    assert "elements outside tolerance" in out[1]
    assert out[2:] == [NOTE, "replay: 2 replayed, 1 failed, 1 without an engine output"]


def test_replay_of_imported_workloads_alone_is_bad_input(published, capsys):
    assert main(["--root", str(published), "replay", "--uuid", IMPORTED]) == 2
    assert capsys.readouterr().out.splitlines() == [
        NOTE, "replay: 0 replayed, 0 failed, 1 without an engine output",
        "replay: nothing to replay: none of the 1 selected workload(s) has an engine output "
        "(expected_output)"]


def test_engine_outputs_count_as_referenced(published):
    ds = open_dataset(published)
    outputs = {d.path for r in ds.receipts.values() for d in r.value.expected_descriptors}
    inputs = {d.path for rows in ds.workloads.values() for r in rows
              for d in r.value.workload.inputs.values() if hasattr(d, "path")}
    assert outputs and not outputs & inputs  # these files only receipts reference
    assert run_check(published) == ([], [])
    stray = TensorStore(published).write(torch.zeros(2), f"blob/workloads/{PAIR}", "stray")
    assert run_check(published)[0] == [
        f"{stray.path}: blob file is referenced by no workload or receipt"]


def test_an_engine_output_of_the_wrong_shape_is_a_problem(published):
    ds = open_dataset(published)
    short = TensorStore(published).write(torch.zeros(1, 8, dtype=torch.bfloat16),
                                         f"blob/workloads/{SINGLE}", "output")
    old = ds.receipts[CAPTURED_SINGLE].value.expected_output.path
    replace_receipt(published, CAPTURED_SINGLE,
                    lambda r: {**r, "expected_output": short.model_dump()})
    (published / old).unlink()
    assert run_check(published)[0] == [
        f"captures.jsonl:{line_of(published, CAPTURED_SINGLE)}: expected_output.y: "
        f"{short.path} has shape (1, 8); output 'y' of this workload is (3, 8)"]


def test_export_keeps_the_receipts_byte_for_byte(published, tmp_path):
    export_fib(published, tmp_path / "out")
    lines = (published / "captures.jsonl").read_text().splitlines()
    exported = (tmp_path / "out/captures.jsonl").read_text().splitlines()
    assert sorted(exported) == sorted(lines)
    assert run_check(tmp_path / "out") == ([], [])


def test_the_audit_runs_on_the_published_layout(published, tmp_path):
    report = tmp_path / "report.jsonl"
    config = AuditConfig(report=report, solutions="all", suite="all", validation_only=True)
    assert exit_code(Audit(open_dataset(published), config).run()) == 0
    records = read_report(report)
    assert sorted((r["workload"], r["status"]) for r in records) == [
        (CAPTURED_PAIR, "PASSED"), (CAPTURED_SINGLE, "PASSED"), (IMPORTED, "PASSED")]


def test_rows_and_the_captures_config_read_the_published_receipts(published):
    ds = open_dataset(published)
    rows = {r.value.workload.uuid: workload_row(ds, r) for rs in ds.workloads.values()
            for r in rs}
    assert rows[IMPORTED]["provenance"] == {"kind": None, "origin": "mlsys26-contest",
                                            "seed": None, "case": None,
                                            "outside_domain": None}
    assert rows[CAPTURED_SINGLE]["provenance"] == {"kind": None, "origin": None, "seed": None,
                                                   "case": None, "outside_domain": None}
    captures = captures_file(published)
    assert len(captures.rows) == 3
    assert {"uuid", "definition", "expected_output", "model_revision", "request",
            "engine_operation", "validation"} <= set(captures.features)


# -------------------------------------------------------------------------------- errors
def problems(root: Path) -> list[str]:
    return run_check(root)[0]


def test_a_receipt_without_uuid_is_named_by_file_line_and_field(published, capsys):
    n = line_of(published, CAPTURED_SINGLE)
    replace_receipt(published, CAPTURED_SINGLE,
                    lambda r: {k: v for k, v in r.items() if k != "uuid"})
    assert main(["--root", str(published), "check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"captures.jsonl:{n}: uuid: Field required"
    assert f"workloads/toy/{SINGLE}.jsonl:1: workload.uuid: no receipt in captures.jsonl for " \
           "this workload" in out
    assert main(["--root", str(published), "replay", "--no-write"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"captures.jsonl:{n}: uuid: Field required", f"{PAIR} {CAPTURED_PAIR}: PASSED", NOTE,
        f"{SINGLE}: 1 workload(s) have no receipt in captures.jsonl",
        "replay: 1 replayed, 0 failed, 2 without an engine output"]


def test_one_descriptor_for_two_outputs_is_an_error(published, capsys):
    outputs = open_dataset(published).receipts[CAPTURED_PAIR].value.expected_output
    replace_receipt(published, CAPTURED_PAIR,
                    lambda r: {**r, "expected_output": outputs["y"].model_dump()})
    n = line_of(published, CAPTURED_PAIR)
    message = (f"captures.jsonl:{n}: expected_output: one descriptor, but {PAIR} has 2 "
               "outputs (y, positive_rows): give a dict by output name")
    assert problems(published) == [message, f"{outputs['positive_rows'].path}: blob file is "
                                   "referenced by no workload or receipt"]
    ds = open_dataset(published)
    with pytest.raises(DataError) as info:
        ds.engine_outputs(ds.receipts[CAPTURED_PAIR])
    assert str(info.value) == message
    assert main(["--root", str(published), "replay", "--no-write"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{PAIR} {CAPTURED_PAIR}: DATA_ERROR ({message})"


def test_an_unknown_output_name_is_an_error(published):
    def rename(receipt):
        outputs = receipt["expected_output"]
        return {**receipt, "expected_output": {"z" if k == "y" else k: v
                                               for k, v in outputs.items()}}
    replace_receipt(published, CAPTURED_PAIR, rename)
    n = line_of(published, CAPTURED_PAIR)
    assert problems(published) == [
        f"captures.jsonl:{n}: expected_output.z: {PAIR} has no output 'z' (outputs: y, "
        "positive_rows)"]


def test_a_missing_output_is_an_error(published):
    replace_receipt(published, CAPTURED_PAIR, lambda r: {
        **r, "expected_output": {"y": r["expected_output"]["y"]}})
    n = line_of(published, CAPTURED_PAIR)
    found = problems(published)
    assert found[0] == (f"captures.jsonl:{n}: expected_output: no descriptor for output "
                        "'positive_rows' (a receipt holds every output or none)")


def test_a_bad_descriptor_is_named_by_its_output(published):
    replace_receipt(published, CAPTURED_PAIR, lambda r: {
        **r, "expected_output": {**r["expected_output"], "y": {"type": "safetensors",
                                                               "path": "/abs.safetensors",
                                                               "tensor_key": "y"}}})
    n = line_of(published, CAPTURED_PAIR)
    assert problems(published)[0] == (
        f"captures.jsonl:{n}: expected_output.y.path: must be a relative path inside the "
        "dataset (no '/' prefix, no '..')")


def test_a_given_kind_still_needs_its_keys(published):
    replace_receipt(published, IMPORTED, lambda r: {
        **r, "provenance": {**r["provenance"], "kind": "generated"}})
    n = line_of(published, IMPORTED)
    assert problems(published)[0] == (
        f"captures.jsonl:{n}: provenance: a generated workload's provenance needs "
        "generator, seed")


def test_a_rewrite_changes_only_the_lines_it_is_given(tmp_path):
    from hf_eval.capture.replay import rewrite_receipts

    path = tmp_path / "captures.jsonl"
    lines = ['{"uuid": "a", "definition": "d", "note": "\\u00e9t\\u00e9", "validation": {"x": 1}}',
             '{"uuid":"b","definition":"d","ratio":1e-05}', "",
             '{"definition": "d", "uuid": "c"}']
    path.write_bytes(("\r\n".join(lines)).encode())  # CRLF, no final newline
    rewrite_receipts(path, {"a": {"validation": {"x": 1, "replay": "ok"}},
                            "c": {"validation": {"replay": "ok"}}})
    assert path.read_bytes().decode().split("\r\n") == [
        '{"uuid": "a", "definition": "d", "note": "\\u00e9t\\u00e9", "validation": {"x": 1, '
        '"replay": "ok"}}', lines[1], "",
        '{"definition": "d", "uuid": "c", "validation": {"replay": "ok"}}']


def test_known_receipt_fields_are_never_converted():
    with pytest.raises(DataError) as info:
        parse_json_line(Receipt, '{"uuid": "u", "definition": "d", "provenance": {"kind": '
                        '"generated", "generator": "g", "seed": "7"}}', "captures.jsonl", 4)
    assert str(info.value) == "captures.jsonl:4: provenance.seed: Input should be a valid integer"
