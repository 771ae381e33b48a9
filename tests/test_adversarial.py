"""Adversarial candidates: each loophole of harness.md must be rejected with the right
status, while an honest control passes. Candidates live in tests/adversarial/<name>/main.py
and run against the toy definition in isolated workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_eval.errors import DataError
from hf_eval.modules import solution_from_directory
from hf_eval.report import read_report
from hf_eval.repository import Dataset
from hf_eval.runner import Audit, AuditConfig
from hf_eval.schema import Solution, parse

HERE = Path(__file__).parent / "adversarial"
DEFINITION = "toy_linear_n8_k16"

#: candidate -> (expected status, a phrase the reason must contain)
EXPECTED = {
    "honest": ("PASSED", ""),
    "alias_input": ("INCORRECT_NUMERICAL", "aliases input 0"),
    "cache_same_tensor": ("INCORRECT_NUMERICAL", "aliases an output of an earlier call"),
    "cache_by_pointer": ("INCORRECT_NUMERICAL", "second input set"),
    "cache_by_call_count": ("INCORRECT_NUMERICAL", "second input set"),
    "mutate_then_undo": ("INCORRECT_NUMERICAL", "first call: input(s) modified: w"),
    "deferred_thread": ("INCORRECT_NUMERICAL", "first call"),
    "patch_timer": ("RUNTIME_ERROR", "time.perf_counter"),
    "patch_torch": ("RUNTIME_ERROR", "Tensor.clone"),
    "forge_result": ("RUNTIME_ERROR", "result channel tampering"),
    "crash": ("RUNTIME_ERROR", "SIGSEGV"),
    "hang": ("TIMEOUT", "no answer within"),
    "nan_output": ("INCORRECT_NUMERICAL", "non-finite"),
    "wrong_dtype": ("INCORRECT_DTYPE", "dtype torch.float32 != torch.bfloat16"),
    "lazy_output": ("INCORRECT_DTYPE", "not a plain torch.Tensor"),
}


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, dict]:
    """One audit of every CPU candidate on the toy's first workload."""
    from tests.conftest import build_toy_root

    tmp = tmp_path_factory.mktemp("adversarial")
    root = build_toy_root(tmp, call_timeout_s=10.0)
    candidates = [solution_from_directory(HERE / name / "main.py", DEFINITION)
                  for name in EXPECTED]
    report = tmp / "report.jsonl"
    config = AuditConfig(report=report, solutions="none", extra_solutions=candidates,
                         suite="first", reference_cache=False)
    Audit(Dataset.load(root), config).run()
    return {r["solution"].removeprefix("candidate-"): r for r in read_report(report)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_candidate_verdict(records, name):
    status, phrase = EXPECTED[name]
    record = records[name]
    assert record["status"] == status, record.get("reason")
    assert phrase in record.get("reason", ""), record.get("reason")


def test_honest_control_was_timed_and_rechecked(records):
    record = records["honest"]
    assert record["timing"]["eager"]["median_ms"] > 0
    assert record["second_input_set"] == {"status": "PASSED", "changed": True}


def test_audit_survived_every_bad_candidate(records):
    assert set(records) == set(EXPECTED)


def test_hardcoded_scale_passes_normally_and_fails_the_scale_probe(tmp_path):
    from tests.conftest import build_toy_root

    root = build_toy_root(tmp_path)
    candidate = solution_from_directory(HERE / "hardcoded_scale" / "main.py", DEFINITION)
    results = {}
    for probe in (False, True):
        report = tmp_path / f"probe-{probe}.jsonl"
        Audit(Dataset.load(root), AuditConfig(
            report=report, solutions="none", extra_solutions=[candidate], suite="first",
            validation_only=True, scale_probe=probe)).run()
        results[probe] = read_report(report)[0]
    assert results[False]["status"] == "PASSED"
    assert results[True]["status"] == "INCORRECT_NUMERICAL"
    assert "scale probe" in results[True]["reason"]


def test_source_path_escaping_the_package_is_refused(tmp_path):
    (tmp_path / "outside.py").write_text("def run(*a):\n    pass\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "main.py").write_text("from helper import run\n")
    (package / "helper.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(DataError, match="escapes its package"):
        solution_from_directory(package / "main.py", DEFINITION)
    data = json.loads(json.dumps({
        "name": "s", "definition": DEFINITION, "author": "a",
        "spec": {"language": "python", "target_hardware": ["cpu"],
                 "entry_point": "main.py::run", "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": "x"}, {"path": "../evil.py", "content": "x"}]}))
    with pytest.raises(DataError, match="stay inside the package"):
        parse(Solution, data, "solutions/x.json")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="side streams need CUDA")
def test_side_stream_work_is_counted(tmp_path):
    from tests.conftest import build_toy_root

    root = build_toy_root(tmp_path)
    candidate = solution_from_directory(HERE / "side_stream" / "main.py", DEFINITION)
    report = tmp_path / "r.jsonl"
    Audit(Dataset.load(root), AuditConfig(report=report, solutions="none",
                                          extra_solutions=[candidate], suite="first",
                                          devices=["cuda"])).run()
    record = read_report(report)[0]
    assert record["status"] == "PASSED", record
    graph = record.get("timing", {}).get("graph")
    assert graph is not None, record
    assert graph.get("median_ms", 0) > 0 or "error" in graph
