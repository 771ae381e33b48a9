"""Replay: captured expected outputs judged against the references under task tolerances."""

from __future__ import annotations

import json

import torch
import torch.nn.functional as F

from hf_eval.capture import Capture
from hf_eval.capture.replay import replay
from hf_eval.checker import run_check
from hf_eval.cli import main
from hf_eval.dataset import open_dataset


def captured_root(tmp_path):
    """Two captured linear calls (a proposed definition) in a fresh root."""
    torch.manual_seed(0)
    weight, bias = torch.randn(6, 12), torch.randn(6)
    with Capture(tmp_path, program="p", ops=["linear"], propose=True):
        for m in (3, 7):
            F.linear(torch.randn(m, 12), weight, bias)
    return tmp_path


def test_replay_passes_and_records_its_result_in_the_receipts(tmp_path):
    root = captured_root(tmp_path)
    result = replay(root)
    assert [r["status"] for r in result.results] == ["PASSED", "PASSED"]
    assert result.lines()[-1] == "replay: 2 replayed, 0 failed, 0 without an engine output"
    assert result.exit_code == 0
    ds = open_dataset(root)
    for receipt in ds.receipts.values():
        record = receipt.value.validation["replay"]
        assert record["status"] == "PASSED" and record["torch"] == torch.__version__
        assert record["tolerance"]["y"]["atol"] == 2e-5 and len(record["reference_sha256"]) == 64
        assert record["outputs"][0]["numel"] > 0
    assert run_check(root) == ([], [])


def test_a_wrong_expected_output_fails_replay_with_its_reason(tmp_path, capsys):
    root = captured_root(tmp_path)
    ds = open_dataset(root)
    located = next(iter(ds.receipts.values()))
    receipt = located.value
    good = ds.store.load(receipt.expected_output["y"])
    wrong = ds.store.write(good * 1.01, "blob/workloads/elsewhere", "y")
    lines = (root / "captures.jsonl").read_text().splitlines()
    lines = [json.dumps({**json.loads(t), "expected_output": {"y": wrong.model_dump()}})
             if json.loads(t)["uuid"] == receipt.uuid else t for t in lines]
    (root / "captures.jsonl").write_text("\n".join(lines) + "\n")
    before = (root / "captures.jsonl").read_text()
    assert main(["--root", str(root), "replay", "--no-write"]) == 1
    out = capsys.readouterr().out
    assert f"{receipt.uuid}: FAILED (y: " in out and "elements outside tolerance" in out
    assert "replay: 2 replayed, 1 failed, 0 without an engine output" in out
    assert (root / "captures.jsonl").read_text() == before  # --no-write wrote nothing
    failed = replay(root).failures
    assert [f["uuid"] for f in failed] == [receipt.uuid]
    again = open_dataset(root).receipts[receipt.uuid].value.validation["replay"]
    assert again["status"] == "FAILED"


def test_generated_samples_are_reported_as_having_nothing_to_replay(toy_root, capsys):
    before = (toy_root / "captures.jsonl").read_bytes()
    assert main(["--root", str(toy_root), "replay"]) == 2
    assert capsys.readouterr().out.splitlines() == [
        "toy_linear_n8_k16: 3 receipt(s) have no expected_output (no engine output to replay; "
        "judged against the reference only)",
        "replay: 0 replayed, 0 failed, 3 without an engine output",
        "replay: nothing to replay: none of the 3 selected workload(s) has an engine output "
        "(expected_output)"]
    assert (toy_root / "captures.jsonl").read_bytes() == before


def test_a_selection_that_matches_nothing_is_bad_input(toy_root, capsys):
    assert main(["--root", str(toy_root), "replay", "--uuid", "no-such-uuid"]) == 2
    assert capsys.readouterr().out.splitlines()[-1] == (
        "replay: nothing to replay: the selection matches no workload")
