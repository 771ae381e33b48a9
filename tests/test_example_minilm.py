"""The documented real capture of all-MiniLM-L6-v2 on the CPU
(results/cpu/2026-11-29-minilm-capture).

End to end into a temporary root: the real program runs under capture, its result is
unchanged, and what it wrote passes ``check``, replay and an audit of the proposed torch
solutions. The committed example root must itself pass ``check`` and replay.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import torch

from hf_eval.capture.replay import replay
from hf_eval.checker import run_check
from hf_eval.dataset import open_dataset
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.records import exit_code
from hf_eval.judge.report import read_report

EXAMPLE = Path(__file__).resolve().parent.parent / "results/cpu/2026-11-29-minilm-capture"
CAPTURED = {"attention_key_padding_h12_d32_fp32": 3, "linear_n384_k384_bias_fp32": 2}


def example_module():
    spec = importlib.util.spec_from_file_location("capture_minilm",
                                                  EXAMPLE / "capture_minilm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_example_passes_check_and_replay():
    assert run_check(EXAMPLE) == ([], [])
    result = replay(EXAMPLE, write=False)
    assert len(result.results) == sum(CAPTURED.values()) and result.failures == []
    ds = open_dataset(EXAMPLE)
    assert {r.value.provenance.kind for r in ds.receipts.values()} == {"captured"}
    assert all(r.value.validation["replay"]["status"] == "PASSED" for r in ds.receipts.values())
    blob_bytes = sum(p.stat().st_size for p in (EXAMPLE / "blob").rglob("*") if p.is_file())
    assert blob_bytes < 4 << 20


def test_real_program_capture_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_EVAL_CACHE", str(tmp_path / "cache"))
    example = example_module()
    loaded = example.load_model()
    plain = example.embed(loaded[0], loaded[1], example.SENTENCES)
    root = tmp_path / "minilm"
    cap, embeddings = example.capture(root, loaded=loaded)
    assert torch.equal(embeddings, plain)  # capture never changes the program's result
    report = cap.report
    assert not report.errors
    assert report.calls == {"linear": 37, "sdpa": 6}
    assert {n: s.captured for n, s in report.definitions.items() if s.captured} == CAPTURED
    refused = {n: s.skipped_byte_limit for n, s in report.definitions.items()
               if not s.captured}
    assert refused == {"linear_n1536_k384_bias_fp32": 1, "linear_n384_k1536_bias_fp32": 1}
    assert {n for n, p in report.proposals.items() if p["written"]} == set(CAPTURED)
    receipt = json.loads((root / "captures.jsonl").read_text().splitlines()[0])
    provenance = receipt["provenance"]
    assert provenance["model"] == example.MODEL
    assert provenance["revision"].startswith("model.safetensors sha256:")
    assert provenance["call_site"]["module"] == "encoder.layer.0.attention.self.query"
    assert provenance["call_site"]["file"] == "transformers/models/bert/modeling_bert.py"

    assert run_check(root) == ([], [])
    result = replay(root)
    assert len(result.results) == 5 and result.failures == []
    audit_report = tmp_path / "audit.jsonl"
    config = AuditConfig(report=audit_report, solutions="all", suite="all",
                         validation_only=True)
    assert exit_code(Audit(open_dataset(root), config).run()) == 0
    records = read_report(audit_report)
    assert sorted(r["solution"] for r in records) == (
        ["torch_attention_key_padding_h12_d32_fp32"] * 3 + ["torch_linear_n384_k384_bias_fp32"] * 2)
    assert {r["status"] for r in records} == {"PASSED"}
