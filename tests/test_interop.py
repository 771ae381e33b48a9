"""FlashInfer Trace import and export, checked against FlashInfer-Bench 0.1.2 itself.

The source directory is built here from the format's documented fields (peers.md):
definitions, workload-only traces with ``safetensors`` (several tensors in one file,
not content-addressed), ``scalar`` and ``random`` descriptors, solutions (one value-
returning, one destination-passing) and an evaluation trace. FlashInfer-Bench's own
``TraceSet.from_path`` loads the source (so the fixture is really its format) and the
export; its evaluator's correctness path judges the exported solutions on the CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from flashinfer_bench.bench.config import BenchmarkConfig
from flashinfer_bench.bench.evaluators.registry import resolve_evaluator
from flashinfer_bench.compile import BuilderRegistry
from flashinfer_bench.data import EvaluationStatus, TraceSet
from safetensors.torch import save_file

from hf_eval.capture.interop import export_fib, import_fib
from hf_eval.checker import run_check
from hf_eval.cli import main
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.records import exit_code
from tests.conftest import write_json

NAME = "scaled_gemm_n8_k16"
REFERENCE = ("import torch\n\n\ndef run(A, B, alpha):\n"
             "    return (alpha * (A.float() @ B.float().T)).to(torch.float16)\n")
GOOD = ("import torch\n\n\ndef run(A, B, alpha):\n"
        "    return (torch.matmul(A, B.T) * alpha).to(torch.float16)\n")
WRONG = GOOD.replace("* alpha", "* alpha * 1.5")


def solution(name: str, content: str, dps: bool | None) -> dict:
    spec = {"language": "python", "target_hardware": ["cpu"], "entry_point": "main.py::run",
            "dependencies": ["torch>=2.9"]}
    if dps is not None:
        spec["destination_passing_style"] = dps
    return {"name": name, "definition": NAME, "author": "tests", "spec": spec,
            "sources": [{"path": "main.py", "content": content}]}


def workload(uuid: str, m: int, inputs: dict) -> str:
    return json.dumps({"definition": NAME, "workload": {"uuid": uuid, "axes": {"M": m},
                                                        "inputs": inputs},
                       "solution": None, "evaluation": None})


@pytest.fixture
def fib_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FIB_CACHE_PATH", str(tmp_path / "fib-cache"))
    src = tmp_path / "fib"
    write_json(src / f"definitions/gemm/{NAME}.json", {
        "name": NAME, "op_type": "gemm", "tags": ["status:test"],
        "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 8},
                 "K": {"type": "const", "value": 16}},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "float16"},
                   "B": {"shape": ["N", "K"], "dtype": "float16"},
                   "alpha": {"shape": None, "dtype": "float32"}},
        "outputs": {"C": {"shape": ["M", "N"], "dtype": "float16"}},
        "reference": REFERENCE})
    write_json(src / "solutions/gemm/torch_gemm.json", solution("torch_gemm", GOOD, False))
    write_json(src / "solutions/gemm/dps_gemm.json", solution("dps_gemm", GOOD, None))
    gen = torch.Generator().manual_seed(0)
    tensors = {"A": torch.randn(4, 16, generator=gen).half(),
               "B": torch.randn(8, 16, generator=gen).half()}
    (src / "blob/workloads/gemm").mkdir(parents=True)
    save_file(tensors, str(src / "blob/workloads/gemm/batch_0.safetensors"))
    stored = {k: {"type": "safetensors", "path": "blob/workloads/gemm/batch_0.safetensors",
                  "tensor_key": k} for k in tensors}
    rows = [workload("w-real", 4, {**stored, "alpha": {"type": "scalar", "value": 0.5}}),
            workload("w-half", 3, {"A": {"type": "random"}, "B": stored["B"],
                                   "alpha": {"type": "scalar", "value": 2.0}}),
            workload("w-random", 2, {"A": {"type": "random"}, "B": {"type": "random"},
                                     "alpha": {"type": "random"}})]
    (src / "workloads/gemm").mkdir(parents=True)
    (src / f"workloads/gemm/{NAME}.jsonl").write_text("\n".join(rows) + "\n")
    trace = json.loads(rows[0])
    trace.update(solution="torch_gemm", evaluation={
        "status": "PASSED", "environment": {"hardware": "cpu"}, "timestamp": "2026-11-01",
        "correctness": {"max_relative_error": 0.0, "max_absolute_error": 0.0},
        "performance": {"latency_ms": 0.01, "reference_latency_ms": 0.02, "speedup_factor": 2.0}})
    (src / "traces/gemm").mkdir(parents=True)
    (src / f"traces/gemm/{NAME}.jsonl").write_text(json.dumps(trace) + "\n")
    loaded = TraceSet.from_path(str(src))  # the fixture really is FlashInfer Trace
    assert len(loaded.workloads[NAME]) == 3 and len(loaded.traces[NAME]) == 1
    return src


def test_random_descriptors_are_refused_without_a_seed_and_nothing_is_written(
        fib_source, tmp_path, capsys):
    root = tmp_path / "ds"
    assert main(["--root", str(root), "import-fib", str(fib_source)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: workloads/gemm/{NAME}.jsonl:2: workload.inputs.A: random "
                          "descriptor")
    assert "--materialise-random SEED" in err
    assert not root.exists() or not any(root.rglob("*.*"))


def test_import_materialises_with_recorded_seeds_and_passes_check_and_audit(
        fib_source, tmp_path):
    root = tmp_path / "ds"
    result = import_fib(fib_source, root, seed=7, source_name="fib-fixture")
    assert (result.workloads, result.materialised, result.traces_not_imported) == (3, 4, 1)
    assert result.solutions == ["torch_gemm"]
    assert result.skipped_solutions == {"dps_gemm": "destination_passing_style must be false: "
                                        "the harness passes inputs only and compares the "
                                        "returned outputs"}
    assert result.tasks_written == [NAME]
    assert run_check(root) == ([], [])
    ds = open_dataset(root)
    receipts = {u: r.value for u, r in ds.receipts.items()}
    real = receipts["w-real"].provenance
    assert real.kind == "imported" and real.source == "fib-fixture"
    assert real.source_path == f"workloads/gemm/{NAME}.jsonl:1"
    assert real.source_inputs["A"]["path"] == "blob/workloads/gemm/batch_0.safetensors"
    seeds = receipts["w-random"].provenance.materialised
    assert [s["input"] for s in seeds] == ["A", "B", "alpha"] and seeds[0]["base_seed"] == 7
    # One source file held A and B: each is now its own content-addressed file; the B
    # shared by two workloads is stored once.
    rows = {r.value.workload.uuid: r.value.workload.inputs for r in ds.workloads[NAME]}
    assert rows["w-real"]["B"] == rows["w-half"]["B"]
    assert rows["w-real"]["A"].path != rows["w-real"]["B"].path
    alpha = rows["w-random"]["alpha"]
    assert alpha.type == "scalar" and isinstance(alpha.value, float)
    # Materialisation is reproducible: the same seed gives the same files.
    again = tmp_path / "again"
    import_fib(fib_source, again, seed=7)
    assert (sorted(p.name for p in (again / "blob").rglob("*.safetensors"))
            == sorted(p.name for p in (root / "blob").rglob("*.safetensors")))
    report = tmp_path / "audit.jsonl"
    config = AuditConfig(report=report, solutions="all", suite="all", validation_only=True)
    assert exit_code(Audit(open_dataset(root), config).run()) == 0


def test_import_refuses_a_conflicting_definition_before_writing(fib_source, tmp_path):
    root = tmp_path / "ds"
    source = json.loads((fib_source / f"definitions/gemm/{NAME}.json").read_text())
    write_json(root / f"definitions/gemm/{NAME}.json", {**source, "description": "other"})
    with pytest.raises(DataError, match="definition exists with different content"):
        import_fib(fib_source, root, seed=1)
    assert not (root / "blob").exists() and not (root / "captures.jsonl").exists()


def fib_evaluate(exported: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list]:
    """FlashInfer-Bench's own evaluator, correctness path, on the CPU.

    Its evaluator calls ``torch.cuda.synchronize(device)`` after every run, which a CPU
    build of torch refuses; with no GPU there is nothing to wait for, so it becomes a
    no-op here. Timing (CUDA events) is not run: that needs a GPU.
    """
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: None)
    trace_set = TraceSet.from_path(str(exported))
    cfg = BenchmarkConfig(num_trials=2, profile_baseline=False)
    statuses: dict[str, list] = {}
    for name, traces in trace_set.workloads.items():
        definition = trace_set.definitions[name]
        evaluator = resolve_evaluator(definition)
        for trace in traces:
            baseline = evaluator.build_baseline(definition, trace.workload, cfg, "cpu",
                                                trace_set.root)
            for sol in trace_set.solutions[name]:
                runnable = BuilderRegistry.get_instance().build(definition, sol)
                correctness, failed = evaluator.check_correctness(
                    definition, runnable, baseline.inputs, baseline.outputs, cfg,
                    str(exported / "eval.log"), "cpu")
                statuses.setdefault(sol.name, []).append(
                    failed.status if failed else EvaluationStatus.PASSED)
    return statuses


def test_export_loads_in_flashinfer_bench_and_its_evaluator_accepts_it(
        fib_source, tmp_path, monkeypatch):
    root = tmp_path / "ds"
    import_fib(fib_source, root, seed=7)
    from tests.conftest import solution_json

    wrong = solution_json("wrong_gemm", WRONG, definition=NAME)
    write_json(root / "solutions/gemm/wrong_gemm.json", wrong)
    exported = tmp_path / "export"
    assert main(["--root", str(root), "export-fib", str(exported)]) == 0
    loaded = TraceSet.from_path(str(exported))
    assert [t.workload.uuid for t in loaded.workloads[NAME]] == ["w-real", "w-half", "w-random"]
    assert {s.name for s in loaded.solutions[NAME]} == {"torch_gemm", "wrong_gemm"}
    assert run_check(exported) == ([], [])  # also a dataset root of this project
    statuses = fib_evaluate(exported, monkeypatch)
    assert statuses["torch_gemm"] == [EvaluationStatus.PASSED] * 3
    assert statuses["wrong_gemm"] == [EvaluationStatus.INCORRECT_NUMERICAL] * 3
    # Round trip: importing the export gives the same workloads and tensors.
    back = tmp_path / "back"
    import_fib(exported, back)
    first = {r.value.workload.uuid: r.value for r in open_dataset(root).workloads[NAME]}
    second = {r.value.workload.uuid: r.value for r in open_dataset(back).workloads[NAME]}
    assert first == second


def test_export_of_captured_data_keeps_receipts_and_expected_output(tmp_path, monkeypatch):
    from hf_eval.capture import Capture

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 8) for _ in range(3))
    with Capture(tmp_path / "ds", program="p", ops=["sdpa"], propose=True):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    monkeypatch.setenv("FIB_CACHE_PATH", str(tmp_path / "fib-cache"))
    export_fib(tmp_path / "ds", tmp_path / "out")
    assert run_check(tmp_path / "out") == ([], [])
    line = (tmp_path / "out/captures.jsonl").read_text()
    assert line == (tmp_path / "ds/captures.jsonl").read_text()  # byte for byte
    receipt = json.loads(line)
    assert receipt["provenance"]["kind"] == "captured"
    assert list(receipt["expected_output"]) == ["output"]  # a dict by output name
    statuses = fib_evaluate(tmp_path / "out", monkeypatch)
    assert statuses == {"torch_attention_causal_h2_d8_fp32": [EvaluationStatus.PASSED]}
    with pytest.raises(DataError, match="not empty"):
        export_fib(tmp_path / "ds", tmp_path / "out")
