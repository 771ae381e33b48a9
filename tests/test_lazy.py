"""``with_tensors``: a row's tensors are fetched when (and only when) that row is read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import inference_kernels_dataset as ikd
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from hf_eval.hub.lazy import with_tensors

DEFINITION = "toy_linear_n8_k16"


class RecordingResolver:
    """Copies files from a complete root and records what it was asked for."""

    name = "recording"

    def __init__(self, source: Path) -> None:
        self.source = source
        self.fetched: list[str] = []

    def fetch(self, store, relpath, expected) -> bool:
        self.fetched.append(relpath)
        (store.root / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.source / relpath, store.root / relpath)
        return True


@pytest.fixture
def lazy_rows(toy_root: Path, tmp_path: Path):
    """(builder rows of a blob-less checkout wrapped by with_tensors, the recorder)."""
    import datasets

    datasets.disable_progress_bars()
    checkout = tmp_path / "checkout"
    shutil.copytree(toy_root, checkout, ignore=shutil.ignore_patterns("*.safetensors"))
    builder = ikd.builder_for(checkout)(config_name=DEFINITION, cache_dir=str(tmp_path / "c"))
    builder.download_and_prepare()
    recorder = RecordingResolver(toy_root)
    source = open_dataset(checkout, resolvers=[recorder])
    return with_tensors(builder.as_dataset(split="test"), dataset=source), recorder


def row_paths(row: dict) -> set[str]:
    return {d["path"] for d in row["inputs"].values() if d["type"] == "safetensors"}


def test_reading_one_row_fetches_exactly_that_rows_tensors(lazy_rows, toy_root):
    rows, recorder = lazy_rows
    row = rows[2]
    assert recorder.fetched == [] and not row["tensors"].loaded  # reading the row: no I/O
    assert row["tensors"]["scale"] == 0.5  # the first access loads the whole row
    assert set(recorder.fetched) == row_paths(row)
    assert len(recorder.fetched) == len(row_paths(row))  # each file once
    tensors = row["tensors"]
    assert list(tensors) == ["x", "w", "scale"]  # the definition's argument order
    assert tensors["x"].shape == (33, 16) and tensors["x"].dtype == torch.bfloat16
    assert tensors["scale"] == 0.5
    original = open_dataset(toy_root)
    expected = original.materialise_inputs(original.definition(DEFINITION),
                                           original.workloads[DEFINITION][2])
    assert torch.equal(tensors["x"], expected[0]) and torch.equal(tensors["w"], expected[1])


def test_reading_columns_and_rows_fetches_nothing(lazy_rows):
    rows, recorder = lazy_rows
    assert list(rows["axes"]) == [{"M": 1}, {"M": 5}, {"M": 33}]
    assert [len(r["tensors"]) for r in rows] == [3, 3, 3]
    assert recorder.fetched == []


def test_args_are_the_positional_inputs(lazy_rows):
    rows, _ = lazy_rows
    tensors = rows[1]["tensors"]
    args = tensors.args()
    assert [a.shape for a in args[:2]] == [(5, 16), (8, 16)] and args[2] == 0.5


def test_a_second_read_is_served_locally(lazy_rows):
    rows, recorder = lazy_rows
    first = rows[0]["tensors"]
    count = len(recorder.fetched)
    again = rows[0]["tensors"]
    assert len(recorder.fetched) == count
    assert torch.equal(first["x"], again["x"])


def test_viewer_config_rows_materialise_too(toy_root, tmp_path):
    import datasets

    from hf_eval.hub import card
    (toy_root / "README.md").write_text("---\nlicense: apache-2.0\n---\n")
    card.main(toy_root)
    rows = datasets.load_dataset(str(toy_root), DEFINITION, split=card.SPLIT,
                                 cache_dir=str(tmp_path / "hf"))
    tensors = with_tensors(rows, root=toy_root)[1]["tensors"]
    assert tensors["x"].shape == (5, 16) and tensors.loaded


def test_streamed_rows_fetch_a_rows_tensors_only_when_read(toy_root, tmp_path):
    """``with_tensors`` on an ``IterableDataset`` (streaming): lazy per row, like the map."""
    import datasets

    datasets.disable_progress_bars()
    checkout = tmp_path / "checkout"
    shutil.copytree(toy_root, checkout, ignore=shutil.ignore_patterns("*.safetensors"))
    builder = ikd.builder_for(checkout)(config_name=DEFINITION, cache_dir=str(tmp_path / "c"))
    builder.download_and_prepare()
    stream = builder.as_dataset(split="test").to_iterable_dataset()
    recorder = RecordingResolver(toy_root)
    lazy = with_tensors(stream, dataset=open_dataset(checkout, resolvers=[recorder]))
    assert isinstance(lazy, datasets.IterableDataset)
    rows = list(lazy)
    assert [r["axes"] for r in rows] == [{"M": 1}, {"M": 5}, {"M": 33}]
    assert recorder.fetched == []  # iterating fetched nothing
    assert rows[2]["tensors"]["x"].shape == (33, 16)
    assert set(recorder.fetched) == row_paths(rows[2])


def test_streamed_viewer_config_materialises(toy_root, tmp_path):
    import datasets

    from hf_eval.hub import card
    (toy_root / "README.md").write_text("---\nlicense: apache-2.0\n---\n")
    card.main(toy_root)
    stream = datasets.load_dataset(str(toy_root), DEFINITION, split="dev", streaming=True)
    (row,) = list(with_tensors(stream, root=toy_root))
    assert row["uuid"] == open_dataset(toy_root).task(DEFINITION).dev[0]
    assert row["inputs"]["x"]["shape"] == [1, 16]
    assert row["tensors"]["x"].shape == (1, 16) and row["tensors"]["scale"] == 0.5


def test_a_streamed_row_without_identity_is_refused(toy_root):
    import datasets

    stream = datasets.Dataset.from_list([{"axes": {"M": 1}}]).to_iterable_dataset()
    with pytest.raises(DataError, match="neither a 'uuid' nor a 'workload' column"):
        list(with_tensors(stream, root=toy_root))


def test_rows_of_another_dataset_version_are_refused(lazy_rows, toy_root):
    rows, _ = lazy_rows
    elsewhere = "blob/workloads/toy/other.safetensors"
    other = rows.with_format(None).map(
        lambda r: {"inputs": {**r["inputs"], "x": {**r["inputs"]["x"], "path": elsewhere}}})
    source = open_dataset(toy_root)
    with pytest.raises(DataError, match="names other tensors than this file"):
        with_tensors(other, dataset=source)[0]
