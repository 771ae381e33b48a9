"""A tiny self-contained dataset root for harness tests (independent of the 21 definitions)."""

from __future__ import annotations

# First, before torch loads OpenMP: importing the package sets the audit's policy.
import hf_eval  # noqa: F401

# isort: split

import json
import os
from pathlib import Path

import pytest
import torch

from hf_eval.data.schema import Receipt, WorkloadTrace
from hf_eval.data.store import TensorStore

REPO = Path(__file__).resolve().parent.parent


def python_path() -> str:
    """``PYTHONPATH`` for a child process of the tests: this checkout first, then what
    the tests themselves were given (where the dependencies are, on some machines)."""
    return os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])

TOY_REFERENCE = '''import torch

def run(x, w, scale):
    """y = scale * (x @ w.T) in FP32, cast to bf16; count = number of positive rows."""
    y = scale * (x.float() @ w.float().T)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
'''

TOY_DEFINITION = {
    "name": "toy_linear_n8_k16", "op_type": "toy", "description": "test-only toy operator",
    "tags": ["status:test"],
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 8},
             "K": {"type": "const", "value": 16}, "ONE": {"type": "const", "value": 1}},
    "inputs": {"x": {"shape": ["M", "K"], "dtype": "bfloat16"},
               "w": {"shape": ["N", "K"], "dtype": "bfloat16"},
               "scale": {"shape": None, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["M", "N"], "dtype": "bfloat16"},
                "positive_rows": {"shape": ["ONE"], "dtype": "int64"}},
    "constraints": ["M >= 1"],
    "reference": TOY_REFERENCE,
}

GOOD_SOLUTION = '''import torch

def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
'''


def solution_json(name: str, content: str, definition: str = "toy_linear_n8_k16") -> dict:
    return {"name": name, "definition": definition, "author": "tests",
            "spec": {"language": "python", "target_hardware": ["cpu"],
                     "entry_point": "main.py::run", "dependencies": ["torch>=2.9"],
                     "destination_passing_style": False},
            "sources": [{"path": "main.py", "content": content}]}


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def write_toy_rows(root: Path, name: str, uuids: list[str], axes: list[dict],
                   inputs: list[dict], generator: str) -> list[WorkloadTrace]:
    """Write ``workloads/toy/<name>.jsonl`` (one row per UUID, with its axes and inputs)
    and ``captures.jsonl`` (a generated receipt per row, seeded by its index, naming
    ``generator``); returns the rows."""
    rows = [WorkloadTrace(definition=name, workload={"uuid": u, "axes": a, "inputs": i})
            for u, a, i in zip(uuids, axes, inputs, strict=True)]
    receipts = [Receipt(uuid=u, definition=name, provenance={
        "kind": "generated", "generator": generator, "seed": index})
        for index, u in enumerate(uuids)]
    (root / "workloads/toy").mkdir(parents=True)
    (root / f"workloads/toy/{name}.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in rows))
    (root / "captures.jsonl").write_text("".join(r.to_line() + "\n" for r in receipts))
    return rows


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own harness cache (verified hashes, references, packages)."""
    monkeypatch.setenv("HF_EVAL_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def toy_root(tmp_path: Path) -> Path:
    """A dataset root with one definition, task, solution, three workloads and receipts."""
    return build_toy_root(tmp_path)


def build_toy_root(tmp_path: Path, call_timeout_s: float = 300.0) -> Path:
    root = tmp_path / "ds"
    write_json(root / "definitions/toy/toy_linear_n8_k16.json", TOY_DEFINITION)
    write_json(root / "solutions/toy/torch_toy.json", solution_json("torch_toy", GOOD_SOLUTION))
    store = TensorStore(root)
    gen = torch.Generator().manual_seed(0)
    w = store.write(torch.randn(8, 16, generator=gen).bfloat16(), "blob/workloads/toy", "w")
    ms = (1, 5, 33)
    xs = [store.write(torch.randn(m, 16, generator=gen).bfloat16(), "blob/workloads/toy", "x")
          for m in ms]
    rows = write_toy_rows(
        root, "toy_linear_n8_k16", [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)],
        [{"M": m} for m in ms],
        [{"x": x, "w": w, "scale": {"type": "scalar", "value": 0.5}} for x in xs],
        "tests.conftest")
    write_json(root / "tasks/toy_linear_n8_k16.json", {
        "definition": "toy_linear_n8_k16",
        "workloads": ["workloads/toy/toy_linear_n8_k16.jsonl"],
        "tolerance": {"atol": 0.005, "rtol": 0.016},
        "dev": [rows[0].workload.uuid],
        "timing": {"warmup": 1, "iters": 2, "trials": 2},
        "baseline": {"solution": "torch_toy", "timed": "call"},
        "preferred": {"cpu": {"solution": "torch_toy", "evidence": "the only solution"}},
        "call_timeout_s": call_timeout_s})
    return root
