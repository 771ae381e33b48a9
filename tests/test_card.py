"""The README's generated ``configs:``/``dataset_info:`` block (``python -m hf_eval card``)."""

from __future__ import annotations

import json

import pytest
import yaml

from hf_eval.cli import main as cli_main
from hf_eval.data.errors import DataError
from hf_eval.hub import card
from tests.conftest import REPO, TOY_DEFINITION, write_json

HEAD = "---\nlicense: apache-2.0\npretty_name: toy\n---\n# toy\n\nBody text.\n"


def front(text: str) -> dict:
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])


def test_committed_readme_and_viewer_files_are_up_to_date():
    from hf_eval.hub import viewer
    readme = (REPO / "README.md").read_text()
    files = card.collect(REPO)
    rendered, _ = card.render(REPO, readme, files)
    assert rendered == readme, "README.md configs are stale: run `python -m hf_eval card`"
    views = [f for f in files if f.path.startswith("viewer/")]
    assert viewer.stale(REPO, views) == [], "viewer/ is stale: run `python -m hf_eval card`"


def test_the_card_has_the_sections_a_newcomer_needs():
    readme = (REPO / "README.md").read_text()
    data = front(readme)
    for key in ("license", "pretty_name", "task_categories", "size_categories", "tags"):
        assert data.get(key), key
    assert data["size_categories"] == [card.size_category(sum(
        i["splits"][-1]["num_examples"] for i in data["dataset_info"]
        if i["config_name"] not in card.CATALOGUES))]
    for section in ("## Dataset Structure", "## What is generated and what is not",
                    "## Browse, load, materialise, evaluate", "## Limitations", "## License",
                    "## Citation"):
        assert f"\n{section}\n" in readme, section
    assert "@misc{" in readme.split("## Citation", 1)[1]
    for info in data["dataset_info"]:
        assert info["splits"] and all(s["num_examples"] > 0 for s in info["splits"]), info
        assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"])


def test_generated_body_is_replaced_between_its_markers(toy_root):
    text = f"{HEAD}\nbefore\n{card.BODY_START}\nstale text\n{card.BODY_END}\nafter\n"
    once, _ = card.render(toy_root, text)
    assert "stale text" not in once and "\nbefore\n" in once and once.endswith("\nafter\n")
    assert "| `toy_linear_n8_k16` | toy | 3 | 1 |" in once
    assert "receipts by kind: 3 generated" in once
    assert card.render(toy_root, once)[0] == once
    with pytest.raises(DataError, match="without"):
        card.render(toy_root, f"{HEAD}{card.BODY_START}\n")


def test_render_keeps_hand_written_keys_and_body_and_is_idempotent(toy_root):
    once, notes = card.render(toy_root, HEAD)
    assert notes == []
    data = front(once)
    assert data["license"] == "apache-2.0" and data["pretty_name"] == "toy"
    assert once.endswith("---\n# toy\n\nBody text.\n")
    assert card.render(toy_root, once)[0] == once
    defaults = [c["config_name"] for c in data["configs"] if c.get("default")]
    assert defaults == [card.DEFAULT_CONFIG]
    assert {i["config_name"] for i in data["dataset_info"]} == {
        c["config_name"] for c in data["configs"]}


def test_workload_features_come_from_the_definition(toy_root):
    data = front(card.render(toy_root, HEAD)[0])
    info = next(i for i in data["dataset_info"] if i["config_name"] == "toy_linear_n8_k16")
    features = {f["name"]: f for f in info["features"]}
    assert list(features) == ["uuid", "definition", "axes", "inputs", "provenance"]
    assert features["axes"]["struct"] == [{"name": "M", "dtype": "int64"}]  # variable axes
    inputs = {f["name"]: {g["name"]: g for g in f["struct"]}
              for f in features["inputs"]["struct"]}
    assert set(inputs["x"]) == {"type", "path", "tensor_key", "shape", "dtype", "value"}
    assert inputs["x"]["shape"] == {"name": "shape", "list": "int64"}
    assert inputs["scale"]["value"] == {"name": "value", "dtype": "float64"}
    assert not [f for f in info["features"] if f.get("dtype") == "null"]  # no always-null
    assert info["splits"] == [{"name": "dev", "num_bytes": info["splits"][0]["num_bytes"],
                               "num_examples": 1},
                              {"name": "test", "num_bytes": info["splits"][1]["num_bytes"],
                               "num_examples": 3}]


def test_a_definition_without_workloads_gets_a_note_not_a_config(toy_root):
    extra = dict(TOY_DEFINITION, name="toy_linear_unbuilt")
    write_json(toy_root / "definitions/toy/toy_linear_unbuilt.json", extra)
    text, notes = card.render(toy_root, HEAD)
    assert "toy_linear_unbuilt" not in [c["config_name"] for c in front(text)["configs"]]
    assert notes == ["toy_linear_unbuilt: no workloads/toy/toy_linear_unbuilt.jsonl, so no "
                     "config"]
    assert any(n.startswith("toy_linear_unbuilt: no workloads/") for n in notes)


def test_a_definition_may_not_shadow_a_catalogue(toy_root):
    clash = dict(TOY_DEFINITION, name="tasks")
    write_json(toy_root / "definitions/toy/tasks.json", clash)
    (toy_root / "workloads/toy/tasks.jsonl").write_text("")
    with pytest.raises(DataError, match="named like a catalogue"):
        card.render(toy_root, HEAD)


def test_objects_are_json_text_in_pretty_files_and_json_in_lines():
    from datasets import Json, List, Value

    mixed = [{"a": 1}, {"b": "x"}, None]
    assert card._infer(mixed, "w", json_lines=False) == Value("string")
    assert card._infer(mixed, "w", json_lines=True) == Json()
    assert card._infer([[{"path": "p", "content": "c"}]], "w", False) == List(
        {"path": Value("string"), "content": Value("string")})
    assert card._infer([1, 2.5], "w", False) == Value("float64")
    assert card._infer([None, None], "w", True) == Value("string")
    with pytest.raises(DataError, match="cannot be shown"):
        card._infer([[{"deep": {"x": 1}}]], "w", json_lines=False)


def test_check_mode_reports_stale_readme_and_viewer_files(toy_root, capsys):
    (toy_root / "README.md").write_text(HEAD)
    assert cli_main(["--root", str(toy_root), "card", "--check"]) == 1
    assert not (toy_root / "viewer").exists()  # --check writes nothing
    assert cli_main(["--root", str(toy_root), "card"]) == 0
    assert cli_main(["--root", str(toy_root), "card", "--check"]) == 0
    assert "up to date" in capsys.readouterr().out
    task = toy_root / "tasks/toy_linear_n8_k16.json"
    task.write_text(task.read_text().replace('"atol": 0.005', '"atol": 0.006'))
    assert cli_main(["--root", str(toy_root), "card", "--check"]) == 1
    assert "viewer/tasks.jsonl: out of date" in capsys.readouterr().err


def test_viewer_rows_are_typed_copies_of_the_files(toy_root):
    from hf_eval.hub import viewer
    files = {f.path: f for f in viewer.viewer_files(toy_root)}
    (definition,) = files["viewer/definitions.jsonl"].rows
    axes = {a["name"]: a for a in definition["axes"]}
    assert axes["N"] == {"name": "N", "type": "const", "value": 8, "description": None}
    assert axes["M"]["type"] == "var" and axes["M"]["value"] is None
    assert [i["name"] for i in definition["inputs"]] == ["x", "w", "scale"]
    assert definition["inputs"][2]["shape"] is None
    (task,) = files["viewer/tasks.jsonl"].rows
    assert task["preferred"] == [{"hardware": "cpu", "solution": "torch_toy",
                                  "evidence": "the only solution"}]
    assert task["tolerance"]["atol"] == 0.005 and task["output_tolerances"] == []
    test = files["viewer/workloads/toy_linear_n8_k16/test.jsonl"].rows
    assert [r["axes"] for r in test] == [{"M": 1}, {"M": 5}, {"M": 33}]
    assert test[2]["inputs"]["x"]["shape"] == [33, 16]
    assert test[2]["inputs"]["w"]["shape"] == [8, 16]
    assert test[2]["inputs"]["scale"] == {"type": "scalar", "path": None, "tensor_key": None,
                                          "shape": None, "dtype": "float32", "value": 0.5}
    dev = files["viewer/workloads/toy_linear_n8_k16/dev.jsonl"].rows
    assert [r["uuid"] for r in dev] == ["00000000-0000-0000-0000-000000000000"]


def test_malformed_catalogue_file_is_named(toy_root):
    (toy_root / "tasks/broken.json").write_text("{not json")
    with pytest.raises(DataError, match=r"tasks/broken.json:1: malformed JSON"):
        card.render(toy_root, HEAD)
    json.loads((toy_root / "tasks/toy_linear_n8_k16.json").read_text())  # untouched


def test_every_column_of_the_card_is_described_by_its_fields_docstring():
    """The card's field list is written from the models' field docstrings: every column of
    every config carries one, and it is the docstring's text."""
    from hf_eval.data.schema import Definition, TaskConfig

    readme = (REPO / "README.md").read_text()
    fields = readme.split("### Fields", 1)[1].split("\n| definition |", 1)[0]
    columns = [line for line in fields.splitlines() if line.startswith("  - `")]
    assert len(columns) >= 30, columns
    undescribed = [line for line in columns if not line.split("): ", 1)[1:]]
    assert not undescribed, undescribed
    for model, name in ((Definition, "constraints"), (TaskConfig, "call_timeout_s")):
        text = " ".join(model.model_fields[name].description.split()).replace("``", "`")
        assert f"  - `{name}` (" in fields and text in fields, name
