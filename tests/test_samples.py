"""The sample builder and the regeneration of large sample tensors on first use."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
import torch

from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from hf_eval.families import registry
from hf_eval.samples import build as build_module
from hf_eval.samples.cases import cases_path, cases_paths, sample_uuid
from tests.conftest import REPO

NAME = "noncausal_dense_attention_h32_d64"


@pytest.fixture
def copy_root(tmp_path: Path) -> Path:
    """A dataset root holding one real definition, rebuilt from its generator."""
    root = tmp_path / "ds"
    (root / "definitions/dense_attention").mkdir(parents=True)
    shutil.copy(REPO / f"definitions/dense_attention/{NAME}.json",
                root / "definitions/dense_attention")
    build_module.build(root, [NAME])
    return root


def test_build_is_idempotent_and_matches_the_committed_sample(copy_root):
    committed = (REPO / f"workloads/dense_attention/{NAME}.jsonl").read_text()
    assert (copy_root / f"workloads/dense_attention/{NAME}.jsonl").read_text() == committed
    first = sorted(p.name for p in (copy_root / "blob").rglob("*"))
    build_module.build(copy_root, [NAME])
    assert sorted(p.name for p in (copy_root / "blob").rglob("*")) == first


#: Families whose whole sample rebuilds in seconds (no multi-MB weight): their rebuilt
#: workload files, receipts and committed tensors must equal the committed bytes.
REBUILT = ["gdn_decode_qk4_v8_d128_k_last", "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4",
           "sparse_mla_prefill_h64_d512_k128", "prefix_cached_block_causal_h32_d128_prefix0"]


@pytest.mark.parametrize("name", REBUILT)
def test_rebuilding_gives_the_committed_bytes(name, tmp_path):
    definition = next((REPO / "definitions").rglob(f"{name}.json"))
    op_type = definition.parent.name
    root = tmp_path / "ds"
    (root / f"definitions/{op_type}").mkdir(parents=True)
    shutil.copy(definition, root / f"definitions/{op_type}")
    build_module.build(root, [name])
    rel = f"workloads/{op_type}/{name}.jsonl"
    assert (root / rel).read_text() == (REPO / rel).read_text()
    mine = (root / "captures.jsonl").read_text().splitlines()
    theirs = [line for line in (REPO / "captures.jsonl").read_text().splitlines()
              if json.loads(line)["definition"] == name]
    assert mine == theirs
    ignore = f"blob/workloads/{name}/.gitignore"
    assert (root / ignore).read_text() == (REPO / ignore).read_text()
    regenerated = set((REPO / ignore).read_text().splitlines()[1:])
    for path in sorted((REPO / f"blob/workloads/{name}").glob("*.safetensors")):
        if path.name not in regenerated:  # committed: byte for byte
            assert (root / path.relative_to(REPO)).read_bytes() == path.read_bytes(), path


def test_every_definition_has_a_held_out_sample():
    """At least 12 cases per definition, labels and seeds distinct, dev a strict subset."""
    from tests import kit

    for path in cases_paths().values():
        spec = json.loads(path.read_text())
        cases = spec["cases"]
        assert len(cases) >= 12, path.name
        assert len({c["label"] for c in cases}) == len(cases), path.name
        assert len({c["seed"] for c in cases}) == len(cases), path.name
        assert all(c.get("note") for c in cases), path.name
        kit.assert_dev_held_out(spec["definition"], kit.task_json(spec["definition"])["dev"])


def test_receipts_say_generated_with_generator_and_seed(copy_root):
    lines = (copy_root / "captures.jsonl").read_text().splitlines()
    receipts = [json.loads(line) for line in lines]
    cases = json.loads(cases_path(NAME).read_text())["cases"]
    assert {r["uuid"] for r in receipts} == {sample_uuid(NAME, c["label"]) for c in cases}
    for receipt in receipts:
        prov = receipt["provenance"]
        assert prov["kind"] == "generated" and prov["generator"] and isinstance(prov["seed"], int)
        assert "not captured" in prov["description"]


def test_cases_outside_the_published_domain_are_labelled_in_receipt_and_row():
    """The committed sample: a recipe's ``outside_domain`` reason is in its receipt's
    provenance and its viewer row, a case inside the domain has neither, and the cases
    the published curation rules out by name (the dense GEMM's M < 4096, the router's
    exact ties) are absent rather than labelled."""
    from hf_eval.hub.rows import provenance_summary

    dataset = open_dataset(REPO)
    labelled = 0
    for path in cases_paths().values():
        spec = json.loads(path.read_text())
        name = spec["definition"]
        for case in spec["cases"]:
            reason = case.get("outside_domain")
            receipt = dataset.receipts[sample_uuid(name, case["label"])].value
            assert receipt.outside_domain == reason, (name, case["label"])
            assert provenance_summary(receipt)["outside_domain"] == reason
            labelled += reason is not None
            if name.startswith("dense_gemm_"):
                assert case["params"]["M"] >= 4096, (name, case["label"])
            if name.startswith("moe_router_"):
                assert "duplicate_tie_rows" not in case["params"], case["label"]
    assert labelled == 10


def large_files(root: Path) -> list[Path]:
    ignore = root / f"blob/workloads/{NAME}/.gitignore"
    names = [line for line in ignore.read_text().splitlines() if not line.startswith("#")]
    assert names, "this test needs at least one regenerated (large) sample tensor"
    return [root / f"blob/workloads/{NAME}" / n for n in names]


def test_missing_large_tensor_is_regenerated_and_verified(copy_root):
    path = large_files(copy_root)[0]
    original = path.read_bytes()
    path.unlink()
    ds = open_dataset(copy_root)
    rel = path.relative_to(copy_root).as_posix()
    assert ds.store.materialise(rel).read_bytes() == original


def _replace_generator(monkeypatch, generate) -> None:
    """Register the dense_attention family with another sample generator (this test only)."""
    family = registry.FAMILIES["dense_attention"]
    monkeypatch.setitem(registry.FAMILIES, "dense_attention",
                        dataclasses.replace(family, generate=generate))


def test_regeneration_that_no_longer_matches_is_refused(copy_root, monkeypatch):
    path = large_files(copy_root)[0]
    path.unlink()
    real = registry.FAMILIES["dense_attention"].generate

    def drifted(definition, params, seed):
        values = real(definition, params, seed)
        return {k: (v + 1 if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
                for k, v in values.items()}

    _replace_generator(monkeypatch, drifted)
    ds = open_dataset(copy_root)
    with pytest.raises(DataError, match="no longer reproduces this sample"):
        ds.store.materialise(path.relative_to(copy_root).as_posix())
    assert not path.exists()


def test_generator_returning_wrong_inputs_is_a_clear_error(copy_root, monkeypatch):
    _replace_generator(monkeypatch, lambda d, p, s: {"Q": torch.zeros(1)})
    with pytest.raises(DataError, match="returned inputs"):
        build_module.build(copy_root, [NAME])


def test_a_missing_committed_sample_tensor_is_an_error_not_regenerated(copy_root):
    ignore = copy_root / f"blob/workloads/{NAME}/.gitignore"
    listed = set(ignore.read_text().splitlines()[1:])
    committed = sorted(p for p in (copy_root / f"blob/workloads/{NAME}").glob("*.safetensors")
                       if p.name not in listed)
    assert committed, "this test needs a committed sample tensor"
    path = committed[0]
    path.unlink()
    rel = path.relative_to(copy_root).as_posix()
    ds = open_dataset(copy_root)
    with pytest.raises(DataError, match=r": tensor file is missing"):
        ds.store.materialise(rel)
    assert not path.exists()


def test_regeneration_says_so(copy_root, capsys):
    path = large_files(copy_root)[0]
    path.unlink()
    open_dataset(copy_root).store.materialise(path.relative_to(copy_root).as_posix())
    err = capsys.readouterr().err
    assert re.search(r"^regenerating \d+ sample tensor\(s\) of workload \S+ "
                     rf"\({NAME}\) from its generator: ", err, re.M), err
