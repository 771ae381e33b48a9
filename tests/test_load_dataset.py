"""``load_dataset(<repo dir>, <config>)`` offline for every README config, and Parquet.

The viewer converts each config to Parquet with ``datasets`` (first 5 GB) and shows the
first rows, whose response is limited in size; both are checked here, on the toy dataset
(whose README the card command writes) and on this repository's README.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from hf_eval.hub import card
from tests.conftest import REPO

#: The dataset viewer's /first-rows rules (huggingface/dataset-viewer,
#: libs/libcommon/src/libcommon/viewer_utils/rows.py and truncate_rows.py): at most 100
#: rows; when their JSON exceeds the byte limit it keeps the first 10 rows and cuts every
#: cell whose JSON is longer than 100 bytes to 100 bytes, and it refuses the config
#: (TooBigContentError, "exceeds the maximum supported size ... even after truncation")
#: only when even that does not fit. Over the limit the viewer still works: it shows fewer
#: rows or cut cells (the solutions config, whose rows embed whole source files, passed
#: 300 kB with the library solutions). 200,000 bytes is the limit the Hub's error
#: messages name; the code's default is 1,000,000.
FIRST_ROWS = 100
ROWS_MIN_NUMBER = 10
MIN_CELL_BYTES = 100
ROWS_MAX_BYTES = 200_000


def viewer_minimum_bytes(rows: list[dict]) -> int:
    """JSON size of what the viewer serves at the most: the first ROWS_MIN_NUMBER rows,
    every cell longer than MIN_CELL_BYTES (as JSON) cut to that many bytes."""
    def cut(cell):
        text = json.dumps(cell, default=str)
        return cell if len(text.encode()) <= MIN_CELL_BYTES else text.encode()[:MIN_CELL_BYTES]
    kept = [{"row_idx": i, "row": {k: cut(v) for k, v in row.items()}, "truncated_cells": []}
            for i, row in enumerate(rows[:ROWS_MIN_NUMBER])]
    return len(json.dumps(kept, default=lambda b: b.decode(errors="replace")).encode())


def readme_configs(root: Path) -> list[str]:
    text = (root / "README.md").read_text()
    front = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
    return [c["config_name"] for c in front.get("configs", [])]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No network for the Hub client or ``datasets``; a private ``datasets`` cache."""
    import datasets
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    if hasattr(datasets.config, "HF_HUB_OFFLINE"):
        monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    datasets.disable_progress_bars()
    return tmp_path / "hf-datasets-cache"


@pytest.fixture
def toy_repo(toy_root: Path) -> Path:
    (toy_root / "README.md").write_text("---\nlicense: apache-2.0\n---\n# toy\n")
    assert card.main(toy_root) == 0
    return toy_root


def front_matter(root: Path) -> dict:
    return yaml.safe_load((root / "README.md").read_text()[4:].split("\n---\n", 1)[0])


def source_rows(root: Path, config: str, split: str) -> list[dict]:
    """The rows a config's split must yield, read straight from its files."""
    entry = next(c for c in front_matter(root)["configs"] if c["config_name"] == config)
    pattern = next(f["path"] for f in entry["data_files"] if f["split"] == split)
    rows = []
    for path in sorted(root.glob(pattern)):
        if path.suffix == ".jsonl":
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        else:
            rows.append(json.loads(path.read_text()))
    return rows


def key_of(row: dict) -> str:
    for getter in (lambda r: r["workload"]["uuid"], lambda r: r["uuid"], lambda r: r["name"],
                   lambda r: r["definition"]):
        try:
            return getter(row)
        except (KeyError, TypeError):
            continue
    raise AssertionError(f"row without a key: {sorted(row)}")


def check_config(root: Path, config: str, cache: Path) -> None:
    """Load every split, compare with the files and the card's split sizes, convert to
    Parquet, bound the first rows."""
    import datasets

    info = next(i for i in front_matter(root)["dataset_info"] if i["config_name"] == config)
    for split in info["splits"]:
        loaded = datasets.load_dataset(str(root), config, split=split["name"],
                                       cache_dir=str(cache))
        expected = source_rows(root, config, split["name"])
        assert len(loaded) == len(expected) == split["num_examples"] > 0
        assert sorted(key_of(r) for r in loaded) == sorted(key_of(r) for r in expected)
        assert loaded.info.splits[split["name"]].num_bytes == split["num_bytes"]
    ds = datasets.load_dataset(str(root), config, split=card.SPLIT, cache_dir=str(cache))

    builder = datasets.load_dataset_builder(str(root), config, cache_dir=str(cache / "pq"))
    builder.download_and_prepare(file_format="parquet")
    files = sorted(Path(builder.cache_dir).glob(f"*-{card.SPLIT}*.parquet"))
    assert files, f"no Parquet written for {config}"
    tables = [pq.read_table(f) for f in files]
    assert sum(t.num_rows for t in tables) == len(ds)
    assert datasets.Features.from_arrow_schema(tables[0].schema) == ds.features

    first = ds.select(range(min(FIRST_ROWS, len(ds)))).to_list()
    assert viewer_minimum_bytes(first) < ROWS_MAX_BYTES


def test_viewer_size_model_cuts_cells_and_can_refuse():
    """Long cells count as their first 100 bytes and rows after the 10th not at all, but
    enough columns still exceed the limit (the viewer's TooBigContentError)."""
    long_rows = [{"source": "x" * 1_000_000, "name": "a"}] * 50
    assert viewer_minimum_bytes(long_rows) < 10 * (MIN_CELL_BYTES + 100)
    wide_rows = [{f"c{i}": "y" * 500 for i in range(200)}] * 10
    assert viewer_minimum_bytes(wide_rows) > ROWS_MAX_BYTES


def test_card_has_a_config_per_definition_and_the_catalogues(toy_repo):
    names = readme_configs(toy_repo)
    assert names == ["definitions", "solutions", "tasks", "captures", "toy_linear_n8_k16"]


@pytest.mark.parametrize("config", ["definitions", "solutions", "tasks", "captures",
                                    "toy_linear_n8_k16"])
def test_toy_config_loads_offline_and_converts(toy_repo, offline, config):
    check_config(toy_repo, config, offline)


def test_workload_rows_show_shapes_and_dtypes_next_to_descriptors(toy_repo, offline):
    import datasets

    ds = datasets.load_dataset(str(toy_repo), "toy_linear_n8_k16", split=card.SPLIT,
                               cache_dir=str(offline))
    row = ds[1]
    assert row["definition"] == "toy_linear_n8_k16"
    assert row["axes"] == {"M": 5}
    x = row["inputs"]["x"]
    assert (x["type"], x["shape"], x["dtype"], x["value"]) == ("safetensors", [5, 16],
                                                               "bfloat16", None)
    assert x["path"].startswith("blob/workloads/toy/")
    assert row["inputs"]["scale"]["value"] == 0.5
    assert row["provenance"]["kind"] == "generated"
    assert "solution" not in row and "evaluation" not in row  # no always-null columns
    dev = datasets.load_dataset(str(toy_repo), "toy_linear_n8_k16", split="dev",
                                cache_dir=str(offline))
    assert dev["uuid"] == json.loads((toy_repo / "tasks/toy_linear_n8_k16.json")
                                     .read_text())["dev"]


def test_default_config_is_the_definitions_catalogue(toy_repo, offline):
    import datasets

    ds = datasets.load_dataset(str(toy_repo), split=card.SPLIT, cache_dir=str(offline))
    assert ds[0]["name"] == "toy_linear_n8_k16"
    axes = {a["name"]: a for a in ds[0]["axes"]}
    assert axes["N"] == {"name": "N", "type": "const", "value": 8, "description": None}


def test_catalogue_columns_are_typed_not_json_text(offline):
    """Where records share a schema, the viewer gets structs and lists."""
    import datasets

    def load(config):
        return datasets.load_dataset(str(REPO), config, split=card.SPLIT,
                                     cache_dir=str(offline))

    tasks = load("tasks").features
    for column in ("tolerance", "timing", "baseline"):
        assert isinstance(tasks[column], dict), column
    assert isinstance(tasks["preferred"], datasets.List)
    solutions = load("solutions").features
    assert isinstance(solutions["spec"], dict)
    definitions = load("definitions")
    for column in ("axes", "inputs", "outputs"):
        assert isinstance(definitions.features[column], datasets.List), column
    first = definitions[0]
    assert {"name", "shape", "dtype", "description"} == set(first["inputs"][0])


@pytest.mark.parametrize("config", readme_configs(REPO))
def test_repository_config_loads_offline_and_converts(config, offline):
    check_config(REPO, config, offline)
