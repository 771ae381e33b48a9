"""``audit --suite fresh``: new cases drawn from the sample's recipes with a secret seed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import torch

from hf_eval.cli import main
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from hf_eval.families import registry
from hf_eval.judge.audit import Audit, AuditConfig, select_workloads
from hf_eval.judge.records import exit_code
from hf_eval.judge.report import read_report
from hf_eval.samples import build as build_module
from hf_eval.samples import cases as recipes
from hf_eval.samples.fresh import FreshRow, fresh_rows, fresh_seed, seed_digest
from tests import fresh_generator
from tests.conftest import REPO, write_json

TOY = "toy_linear_n8_k16"
REAL = "noncausal_dense_attention_h32_d64"


@pytest.fixture
def toy_sample(toy_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy root rebuilt as a generated sample of ``tests.fresh_generator`` (lazy ``w``)."""
    families = tmp_path / "families"
    write_json(families / f"toy/{TOY}.cases.json", {"definition": TOY,
                                       "cases": [{"label": f"m{m}", "seed": m, "params": {"M": m}}
                                                 for m in (1, 5, 33)]})
    monkeypatch.setattr(recipes, "FAMILIES_DIR", families)
    monkeypatch.setitem(registry.FAMILIES, "toy", fresh_generator.FAMILY)
    (toy_root / "captures.jsonl").write_text("")
    build_module.build(toy_root, [TOY])
    task_path = toy_root / f"tasks/{TOY}.json"
    task = json.loads(task_path.read_text())
    task["dev"] = [open_dataset(toy_root).workloads[TOY][0].value.workload.uuid]
    task_path.write_text(json.dumps(task))
    return toy_root


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def test_one_fresh_row_per_recipe_with_the_recipes_shapes_and_new_values(toy_sample):
    dataset = open_dataset(toy_sample)
    sample = dataset.workloads[TOY]
    rows = fresh_rows(dataset, TOY, b"secret one")
    assert [r.recipe for r in rows] == ["m1", "m5", "m33"]
    assert [r.value.workload.axes for r in rows] == [s.value.workload.axes for s in sample]
    assert not {r.value.workload.uuid for r in rows} & {s.value.workload.uuid for s in sample}
    definition = dataset.definition(TOY)
    for row, published in zip(rows, sample):
        fresh = dataset.materialise_inputs(definition, row)
        known = dataset.materialise_inputs(definition, published)
        assert fresh[0].shape == known[0].shape and not torch.equal(fresh[0], known[0])
        assert torch.equal(fresh[1], known[1])  # the layer's weight is the sample's
        assert fresh[2] == known[2]


def test_the_seed_comes_from_the_secret_and_only_its_hash_is_shown(toy_sample):
    dataset = open_dataset(toy_sample)
    definition = dataset.definition(TOY)
    a1, a2 = fresh_rows(dataset, TOY, b"a"), fresh_rows(dataset, TOY, b"a")
    b = fresh_rows(dataset, TOY, b"b")
    x = [dataset.materialise_inputs(definition, rows[1])[0] for rows in (a1, a2, b)]
    assert torch.equal(x[0], x[1]) and not torch.equal(x[0], x[2])
    assert a1[1].value.workload.uuid == a2[1].value.workload.uuid != b[1].value.workload.uuid
    seed = fresh_seed(b"a", TOY, "m5")
    assert a1[1].case.seed == seed != 5
    assert a1[1].report_fields() == {"recipe": "m5", "seed_sha256": seed_digest(seed)}
    assert seed_digest(seed) == hashlib.sha256(str(seed).encode()).hexdigest()
    assert str(seed) not in json.dumps(a1[1].report_fields())


def test_a_shared_weight_is_the_samples_file_and_never_drawn_again(toy_sample):
    dataset = open_dataset(toy_sample)
    rows = fresh_rows(dataset, TOY, b"secret")
    w_path = {s.value.workload.inputs["w"].path for s in dataset.workloads[TOY]}
    assert len(w_path) == 1
    before = fresh_generator.DRAWS["w"]
    for row in rows:
        assert row.stored == {"w"} and row.value.workload.inputs["w"].path in w_path
        drawn = row.draw_inputs(dataset.definition(TOY))
        assert set(drawn) == {"x"}
    assert fresh_generator.DRAWS["w"] == before


def test_a_lazy_input_the_sample_does_not_share_is_refused(toy_sample):
    path = toy_sample / f"workloads/toy/{TOY}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[1]["workload"]["inputs"]["w"] = lines[1]["workload"]["inputs"]["x"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataError, match="reference 2 files for it, not one"):
        fresh_rows(open_dataset(toy_sample), TOY, b"secret")


def test_the_fresh_suite_audits_and_writes_nothing(toy_sample, tmp_path, monkeypatch):
    cache = tmp_path / "eval-cache"
    monkeypatch.setenv("HF_EVAL_CACHE", str(cache))
    before = tree(toy_sample)
    report = tmp_path / "fresh.jsonl"
    audit = Audit(open_dataset(toy_sample), AuditConfig(report=report, suite="fresh",
                                                        validation_only=True))
    assert exit_code(audit.run()) == 0
    records = read_report(report)
    assert [r["fresh"]["recipe"] for r in records] == ["m1", "m5", "m33"]
    assert [r["status"] for r in records] == ["PASSED"] * 3
    assert all(r["reference"]["source"] == "computed" for r in records)
    assert {r["workload"] for r in records} == {
        r.value.workload.uuid for r in audit.fresh.rows(audit.dataset, TOY)}
    assert tree(toy_sample) == before  # no tensor, workload or receipt written
    assert not list((cache / "references").rglob("*.safetensors"))  # no reference cached


def test_a_wrong_kernel_fails_on_fresh_cases(toy_sample, tmp_path):
    from tests.conftest import GOOD_SOLUTION, solution_json

    wrong = GOOD_SOLUTION.replace("* scale", "* scale * 1.1")
    write_json(toy_sample / "solutions/toy/wrong.json", solution_json("wrong", wrong))
    config = AuditConfig(report=tmp_path / "r.jsonl", suite="fresh", solutions="wrong",
                         validation_only=True)
    records = Audit(open_dataset(toy_sample), config).run()
    assert {r.status.value for r in records} == {"INCORRECT_NUMERICAL"}


def test_fresh_rows_exist_only_inside_an_audit(toy_sample):
    dataset = open_dataset(toy_sample)
    with pytest.raises(DataError, match="drawn by an audit"):
        select_workloads(dataset, dataset.task(TOY), TOY, "fresh", [])


def test_resume_refuses_a_fresh_suite(toy_sample, tmp_path, capsys):
    code = main(["--root", str(toy_sample), "audit", "--suite", "fresh", "--resume",
                 "--report", str(tmp_path / "r.jsonl")])
    assert code == 2
    assert "cannot continue a fresh suite" in capsys.readouterr().err


def test_real_definition_fresh_rows_follow_its_recipes(tmp_path):
    """The real generator of one small definition: shapes kept, values new, nothing stored."""
    root = tmp_path / "ds"
    shutil.copytree(REPO / "definitions", root / "definitions")
    build_module.build(root, [REAL])
    dataset = open_dataset(root)
    rows = fresh_rows(dataset, REAL, b"s")
    sample = dataset.workloads[REAL]
    assert len(rows) == len(sample) >= 12
    assert [r.value.workload.axes for r in rows] == [s.value.workload.axes for s in sample]
    assert all(isinstance(r, FreshRow) and not r.stored for r in rows)
    definition = dataset.definition(REAL)
    fresh_q = dataset.materialise_inputs(definition, rows[0])[0]
    sample_q = dataset.materialise_inputs(definition, sample[0])[0]
    assert fresh_q.shape == sample_q.shape and not torch.equal(fresh_q, sample_q)
