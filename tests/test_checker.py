"""The checker: a clean dataset passes; each rule, violated once, is reported by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_eval import checker
from hf_eval.checker import run_check
from hf_eval.data.store import TensorStore
from tests.conftest import solution_json, write_json

WL = "workloads/toy/toy_linear_n8_k16.jsonl"
TASK = "tasks/toy_linear_n8_k16.json"


def edit_rows(root: Path, fn) -> None:
    path = root / WL
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    fn(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def edit_json(root: Path, rel: str, fn) -> None:
    data = json.loads((root / rel).read_text())
    fn(data)
    (root / rel).write_text(json.dumps(data))


def problems(root: Path) -> list[str]:
    return run_check(root)[0]


def test_clean_dataset_has_no_problems(toy_root):
    assert problems(toy_root) == []


def test_the_command_exits_non_zero_with_one_line_per_problem(toy_root, capsys):
    from hf_eval.cli import main

    assert main(["--root", str(toy_root), "check"]) == 0
    (toy_root / "definitions/toy/toy_linear_n8_k16.json").write_text("{")
    assert main(["--root", str(toy_root), "check"]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("definitions/toy/toy_linear_n8_k16.json:1: malformed JSON")


def inputs_of(row: dict) -> dict:
    return row["workload"]["inputs"]


def remove_receipt(root: Path) -> None:
    lines = (root / "captures.jsonl").read_text().splitlines()
    (root / "captures.jsonl").write_text("\n".join(lines[1:]) + "\n")


def unreferenced_blob(root: Path) -> None:
    TensorStore(root).write(torch.ones(3), "blob/workloads/toy", "stray")


def wrong_shape(root: Path) -> None:
    desc = TensorStore(root).write(torch.ones(2, 15).bfloat16(), "blob/workloads/toy", "x")
    edit_rows(root, lambda rows: inputs_of(rows[0]).update(x=desc.model_dump()))
    edit_rows(root, lambda rows: rows[0]["workload"]["axes"].update(M=2))


def wrong_dtype(root: Path) -> None:
    desc = TensorStore(root).write(torch.ones(1, 16), "blob/workloads/toy", "x")
    edit_rows(root, lambda rows: inputs_of(rows[0]).update(x=desc.model_dump()))


def corrupt_blob(root: Path) -> None:
    row = json.loads((root / WL).read_text().splitlines()[0])
    path = root / row["workload"]["inputs"]["x"]["path"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


def delete_blob(root: Path) -> None:
    row = json.loads((root / WL).read_text().splitlines()[0])
    (root / row["workload"]["inputs"]["x"]["path"]).unlink()


def duplicate_uuid(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1]["workload"].update(uuid=rows[0]["workload"]["uuid"]))


RULES = [
    ("schema", lambda r: edit_json(r, TASK, lambda d: d.update(timing={"warmup": -1})),
     "tasks/toy_linear_n8_k16.json: timing.warmup: Input should be greater than or equal to 0"),
    ("definition file name", lambda r: (r / "definitions/toy/toy_linear_n8_k16.json").rename(
        r / "definitions/toy/other.json"), "file name must be the definition name"),
    ("definition directory", lambda r: (r / "definitions/toy").rename(r / "definitions/misc"),
     "must live in definitions/toy/"),
    ("task missing", lambda r: (r / TASK).unlink(), "no task config"),
    ("solution definition", lambda r: write_json(
        r / "solutions/toy/stray.json", solution_json("stray", "def run(): pass", "nope")),
     "unknown definition 'nope'"),
    ("task workload file", lambda r: edit_json(r, TASK, lambda d: d.update(
        workloads=["workloads/toy/none.jsonl"])),
     "workload file workloads/toy/none.jsonl does not exist"),
    ("dev uuid", lambda r: edit_json(r, TASK, lambda d: d.update(dev=["not-a-uuid"])),
     "dev UUID not-a-uuid is not a workload"),
    ("task solution", lambda r: edit_json(r, TASK, lambda d: d["baseline"].update(
        solution="ghost")), "baseline.solution: unknown solution 'ghost'"),
    ("task output", lambda r: edit_json(r, TASK, lambda d: d.update(
        output_tolerances={"z": {"atol": 0, "rtol": 0}})), "no output named 'z'"),
    ("duplicate uuid", duplicate_uuid, "duplicate workload uuid"),
    ("workload definition", lambda r: edit_rows(r, lambda rows: rows[0].update(definition="nope")),
     "unknown definition 'nope'"),
    ("random input", lambda r: edit_rows(r, lambda rows: inputs_of(rows[0]).update(
        x={"type": "random"})), "random descriptors are not allowed"),
    ("content address", lambda r: edit_rows(r, lambda rows: inputs_of(rows[0])["x"].update(
        path="blob/workloads/toy/x.safetensors")), "tensor path must be blob/.../<sha256>"),
    ("extra input", lambda r: edit_rows(r, lambda rows: inputs_of(rows[0]).update(
        extra={"type": "scalar", "value": 1})), "inputs not in the definition: ['extra']"),
    ("missing axis", lambda r: edit_rows(r, lambda rows: rows[0]["workload"].update(axes={})),
     "missing variable axes ['M']"),
    ("constant axis", lambda r: edit_rows(r, lambda rows: rows[0]["workload"]["axes"].update(
        N=9)), "constant axis is 8, workload says 9"),
    ("constraint", lambda r: edit_rows(r, lambda rows: rows[0]["workload"]["axes"].update(M=0)),
     "constraint violated: M >= 1"),
    ("receipt missing", remove_receipt, "no receipt in captures.jsonl"),
    ("receipt orphan", lambda r: open(r / "captures.jsonl", "a").write(json.dumps(
        {"uuid": "ghost", "definition": "toy_linear_n8_k16",
         "provenance": {"kind": "imported", "source": "x"}}) + "\n"),
     "receipt for a workload that does not exist"),
    ("unreferenced blob", unreferenced_blob, "blob file is referenced by no workload"),
    ("tensor shape", wrong_shape, "does not match the definition's (2, 16)"),
    ("tensor dtype", wrong_dtype, "dtype torch.float32 does not match the definition's bfloat16"),
    ("hash", corrupt_blob, "sha256 mismatch"),
    ("missing blob", delete_blob, "tensor file is missing"),
]


@pytest.mark.parametrize("break_it, expected", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_each_rule_is_reported(toy_root, break_it, expected):
    break_it(toy_root)
    found = problems(toy_root)
    assert any(expected in p for p in found), found


def test_family_value_rules_are_applied(toy_root, monkeypatch):
    def rules(definition, inputs):
        return ["scale: must be positive"] if inputs["scale"] <= 0 else []

    monkeypatch.setattr(checker, "family_rules", lambda op_type: rules)
    assert problems(toy_root) == []
    edit_rows(toy_root, lambda rows: inputs_of(rows[2]).update(scale={"type": "scalar",
                                                                      "value": -1.0}))
    found = problems(toy_root)
    assert found == [f"{WL}:3: value rule: scale: must be positive"]


def test_lazy_counts_what_it_did_not_check(toy_root):
    delete_blob(toy_root)
    found, notes = run_check(toy_root, lazy=True)
    assert found == []
    assert notes == ["1 workload(s) not checked: tensors not present locally (--lazy)"]
