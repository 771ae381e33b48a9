"""Bad input through the command line: one line naming the file, never a traceback."""

from __future__ import annotations

import json

import pytest
import torch

from hf_eval.cli import main
from hf_eval.data.store import TensorStore
from hf_eval.judge.report import read_report

WL = "workloads/toy/toy_linear_n8_k16.jsonl"


def first_row(root):
    return json.loads((root / WL).read_text().splitlines()[0])


def replace_first_row(root, row):
    lines = (root / WL).read_text().splitlines()
    lines[0] = json.dumps(row)
    (root / WL).write_text("\n".join(lines) + "\n")


def run_audit(root, tmp_path, capsys):
    report = tmp_path / "r.jsonl"
    code = main(["--root", str(root), "audit", "--suite", "first", "--validation-only",
                 "--report", str(report)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured, report


def test_malformed_definition(toy_root, tmp_path, capsys):
    (toy_root / "definitions/toy/toy_linear_n8_k16.json").write_text('{"name": ')
    code, captured, _ = run_audit(toy_root, tmp_path, capsys)
    assert code == 2
    assert captured.err.strip() == ("error: definitions/toy/toy_linear_n8_k16.json:1: "
                                    "malformed JSON: Expecting value")


@pytest.mark.parametrize("problem", ["shape", "dtype", "missing", "hash"])
def test_bad_tensor_is_a_one_line_data_error(toy_root, tmp_path, capsys, problem):
    row = first_row(toy_root)
    path = toy_root / row["workload"]["inputs"]["x"]["path"]
    if problem in ("shape", "dtype"):
        bad = torch.ones(1, 15).bfloat16() if problem == "shape" else torch.ones(1, 16)
        row["workload"]["inputs"]["x"] = TensorStore(toy_root).write(
            bad, "blob/workloads/toy", "x").model_dump()
        replace_first_row(toy_root, row)
    elif problem == "missing":
        path.unlink()
    else:
        data = bytearray(path.read_bytes())
        data[-1] ^= 1
        path.write_bytes(bytes(data))
    code, _, report = run_audit(toy_root, tmp_path, capsys)
    (record,) = read_report(report)
    assert code == 2 and record["status"] == "DATA_ERROR"  # bad data, not a failed candidate
    assert "\n" not in record["reason"] and "blob/workloads/toy/" in record["reason"]
    expected = {"shape": "does not match the definition's (1, 16)", "dtype": "dtype",
                "missing": "missing", "hash": "sha256 mismatch"}[problem]
    assert expected in record["reason"]


def test_unknown_definition(toy_root, capsys):
    assert main(["--root", str(toy_root), "audit", "--definitions", "nope"]) == 2
    assert capsys.readouterr().err.strip() == "error: definitions/: unknown definition 'nope'"
