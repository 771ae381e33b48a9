"""``inference_kernels_dataset.py``: configs, dev/test splits, rows, cache invalidation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inference_kernels_dataset as ikd
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from tests.conftest import REPO

DEFINITION = "toy_linear_n8_k16"


@pytest.fixture(autouse=True)
def quiet():
    import datasets

    datasets.disable_progress_bars()


def build(root: Path, config: str, cache: Path):
    builder = ikd.builder_for(root)(config_name=config, cache_dir=str(cache))
    builder.download_and_prepare()
    return {split: builder.as_dataset(split=split) for split in ("dev", "test")}


def test_configs_are_all_plus_one_per_definition(toy_root):
    names = list(ikd.builder_for(toy_root).builder_configs)
    assert names == ["all", DEFINITION]


def test_dev_is_the_tasks_dev_and_test_is_every_workload(toy_root, tmp_path):
    splits = build(toy_root, DEFINITION, tmp_path / "cache")
    dataset = open_dataset(toy_root)
    every = [r.value.workload.uuid for r in dataset.workloads[DEFINITION]]
    assert splits["test"]["uuid"] == every
    assert splits["dev"]["uuid"] == dataset.task(DEFINITION).dev
    assert len(splits["dev"]) == 1 < len(splits["test"])


def test_rows_carry_descriptors_and_provenance_not_tensors(toy_root, tmp_path):
    row = build(toy_root, "all", tmp_path / "cache")["test"][1]
    trace = open_dataset(toy_root).workloads[DEFINITION][1].value
    assert row["uuid"] == trace.workload.uuid and row["definition"] == DEFINITION
    assert row["axes"] == {"M": 5}
    assert row["inputs"]["x"] == trace.workload.inputs["x"].model_dump()
    assert row["inputs"]["scale"] == {"type": "scalar", "value": 0.5}
    assert row["provenance"] == {"kind": "generated", "origin": "tests.conftest", "seed": 1,
                                 "case": None, "outside_domain": None}
    assert len(json.dumps(row)) < 2000  # a handful of descriptors, never tensor bytes


def test_editing_the_data_is_never_served_from_a_stale_cache(toy_root, tmp_path):
    cache = tmp_path / "cache"
    assert len(build(toy_root, DEFINITION, cache)["test"]) == 3
    workloads = toy_root / "workloads/toy/toy_linear_n8_k16.jsonl"
    workloads.write_text("".join(workloads.read_text().splitlines(keepends=True)[:2]))
    assert len(build(toy_root, DEFINITION, cache)["test"]) == 2


def test_a_dev_uuid_without_a_workload_is_an_error(toy_root, tmp_path):
    task_path = toy_root / f"tasks/{DEFINITION}.json"
    task = json.loads(task_path.read_text())
    task["dev"] = ["not-a-workload"]
    task_path.write_text(json.dumps(task))
    with pytest.raises(DataError, match=r"tasks/toy_linear_n8_k16.json: dev: dev UUIDs not "
                                        r"among the workloads: \['not-a-workload'\]"):
        build(toy_root, DEFINITION, tmp_path / "cache")


def test_repository_builder_covers_every_definition_on_disk(tmp_path):
    names = ikd.definition_names(REPO)
    assert list(ikd.InferenceKernels.builder_configs) == ["all", *names]
    dataset = open_dataset(REPO)
    ready = [n for n in names if n in dataset.tasks and dataset.workloads.get(n)]
    assert ready, "no definition of this repository has a task and workloads yet"
    builder = ikd.InferenceKernels(config_name=ready[0], cache_dir=str(tmp_path / "cache"))
    builder.download_and_prepare()
    dev = builder.as_dataset(split="dev")
    test = builder.as_dataset(split="test")
    assert sorted(dev["uuid"]) == sorted(dataset.task(ready[0]).dev)
    assert test["uuid"] == [r.value.workload.uuid for r in dataset.workloads[ready[0]]]
    assert all(p["kind"] for p in test["provenance"])
