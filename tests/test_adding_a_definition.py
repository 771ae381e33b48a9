"""A definition of a family the harness knows is added in four places, and nothing else
needs an edit: its definition file, its task, a solution, and its data in the family's
folder (sample cases, benchmark shapes, roofline formulas). From those the sample is built,
the dataset checks clean, its solution passes the audit with timing, and the benchmark
reads its shapes and roofline.

The new definition is dense attention with 4 heads of dimension 32 (no such definition is
published); the family module reads both sizes from the definition's constant axes. (In a
dataset with the interface audit, its tags would also say where it stands there: the
``interface:not-audited`` rule is tested in ``tests/test_interfaces.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path

from hf_eval.bench import roofline, shapes
from hf_eval.checker import run_check
from hf_eval.data.schema import Definition
from hf_eval.dataset import open_dataset
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.report import read_records
from hf_eval.samples import cases as sample_cases
from hf_eval.samples.build import build
from hf_eval.samples.cases import sample_uuid
from tests.conftest import write_json

NAME = "noncausal_dense_attention_h4_d32"
SOLUTION = "torch_sdpa_dense_h4_d32"
#: (label, seed, B, Nq, Nk): self and cross attention, a single query, a single key.
CASES = [("self_b1_n16", 1, 1, 16, 16), ("cross_b2_nq9_nk5", 2, 2, 9, 5),
         ("cross_b1_nq1_nk12", 3, 1, 1, 12), ("cross_b3_nq7_nk1", 4, 3, 7, 1)]
DEV = ["self_b1_n16", "cross_b2_nq9_nk5"]

REFERENCE = '''import torch


def run(Q, K, V):
    """softmax(Q K^T / sqrt(32)) V per head, in FP32, rounded to BF16 once."""
    logits = torch.einsum("bihd,bjhd->bhij", Q.float(), K.float()) * 32 ** -0.5
    out = torch.einsum("bhij,bjhd->bihd", torch.softmax(logits, dim=-1), V.float())
    return out.to(torch.bfloat16)
'''

SOLUTION_SOURCE = '''import torch.nn.functional as F


def run(Q, K, V):
    out = F.scaled_dot_product_attention(Q.transpose(1, 2), K.transpose(1, 2),
                                         V.transpose(1, 2), scale=32 ** -0.5)
    return out.transpose(1, 2).contiguous()
'''


def _definition() -> dict:
    tensor = {"shape": ["B", "Nq", "H", "D"], "dtype": "bfloat16"}
    kv = {"shape": ["B", "Nk", "H", "D"], "dtype": "bfloat16"}
    return {"name": NAME, "op_type": "dense_attention", "tags": ["status:test"],
            "description": "test only: dense non-causal attention, 4 heads of 32",
            "axes": {"B": {"type": "var"}, "Nq": {"type": "var"}, "Nk": {"type": "var"},
                     "H": {"type": "const", "value": 4}, "D": {"type": "const", "value": 32}},
            "inputs": {"Q": tensor, "K": kv, "V": kv}, "outputs": {"output": tensor},
            "constraints": ["B >= 1", "Nq >= 1", "Nk >= 1"], "reference": REFERENCE}


def _add_the_definition(root: Path, families: Path) -> list[Path]:
    """Write the new definition's files in its four places; returns them."""
    written = {
        root / f"definitions/dense_attention/{NAME}.json": _definition(),
        root / f"tasks/{NAME}.json": {
            "definition": NAME, "workloads": [f"workloads/dense_attention/{NAME}.jsonl"],
            "tolerance": {"atol": 0.005, "rtol": 0.016},
            "dev": [sample_uuid(NAME, label) for label in DEV],
            "timing": {"warmup": 1, "iters": 2, "trials": 2},
            "baseline": {"solution": SOLUTION, "timed": "call"},
            "preferred": {"cpu": {"solution": SOLUTION, "evidence": "the only solution"}}},
        root / f"solutions/dense_attention/{SOLUTION}.json": {
            "name": SOLUTION, "definition": NAME, "author": "tests",
            "spec": {"language": "python", "target_hardware": ["cpu"],
                     "entry_point": "main.py::run", "dependencies": ["torch>=2.9"],
                     "destination_passing_style": False},
            "sources": [{"path": "main.py", "content": SOLUTION_SOURCE}]},
        families / f"dense_attention/{NAME}.cases.json": {
            "definition": NAME,
            "cases": [{"label": label, "seed": seed, "params": {"B": b, "Nq": nq, "Nk": nk},
                       "note": "test only"} for label, seed, b, nq, nk in CASES]},
        families / f"dense_attention/{NAME}.shapes.json": {
            "definition": NAME, "note": "test only", "source": "test only",
            "shapes": [{"label": "self_n64", "axes": {"B": 1, "Nq": 64, "Nk": 64}}]},
        families / f"dense_attention/{NAME}.roofline.json": {
            "flops": "4 * B * H * Nq * Nk * D", "bytes": "2 * B * H * D * (2 * Nq + 2 * Nk)",
            "compute": "bf16", "note": "test only", "derived": {}},
    }
    for path, data in written.items():
        write_json(path, data)
    return list(written)


def test_a_definition_is_added_in_four_places(tmp_path, monkeypatch):
    root, families = tmp_path / "ds", tmp_path / "families"
    for module in (sample_cases, shapes, roofline):
        monkeypatch.setattr(module, "FAMILIES_DIR", families)
    written = _add_the_definition(root, families)
    places = {path.relative_to(tmp_path).parts[:2] for path in written}
    assert places == {("ds", "definitions"), ("ds", "tasks"), ("ds", "solutions"),
                      ("families", "dense_attention")}

    assert build(root, [NAME]) == [NAME]
    receipts = [json.loads(line) for line in (root / "captures.jsonl").read_text().splitlines()]
    assert sorted(r["uuid"] for r in receipts) == sorted(sample_uuid(NAME, c[0]) for c in CASES)
    assert run_check(root) == ([], [])

    report = tmp_path / "audit.jsonl"
    config = AuditConfig(report=report, solutions="all", suite="dev")
    Audit(open_dataset(root), config).run()
    records = read_records(report).records
    assert [r["status"] for r in records] == ["PASSED", "PASSED"]
    assert all(r["timing"] for r in records)  # timed on fresh content the family drew

    definition = Definition.model_validate(_definition())
    (shape,) = shapes.load_shapes(definition)
    assert [tuple(t.shape) for t in shapes.generate(definition, shape, device="cpu")] == \
        [(1, 64, 4, 32)] * 3
    cost = roofline.cost(definition, shape.axes)
    assert cost.flops == 4 * 1 * 4 * 64 * 64 * 32

