"""The README's generated ``configs:``/``dataset_info:`` block (``python -m hf_eval card``)."""

from __future__ import annotations

import json

import pytest
import yaml

from hf_eval import card
from hf_eval.cli import main as cli_main
from hf_eval.errors import DataError
from tests.conftest import REPO, TOY_DEFINITION, write_json

HEAD = "---\nlicense: apache-2.0\npretty_name: toy\n---\n# toy\n\nBody text.\n"


def front(text: str) -> dict:
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])


def test_committed_readme_is_up_to_date():
    readme = (REPO / "README.md").read_text()
    rendered, _ = card.render(REPO, readme)
    assert rendered == readme, "README.md configs are stale: run `python -m hf_eval card`"


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
    workload = next(f for f in info["features"] if f["name"] == "workload")["struct"]
    axes = next(f for f in workload if f["name"] == "axes")["struct"]
    assert axes == [{"name": "M", "dtype": "int64"}]  # only the variable axes
    inputs = {f["name"]: f["struct"] for f in next(
        f for f in workload if f["name"] == "inputs")["struct"]}
    assert {f["name"] for f in inputs["x"]} == {"type", "path", "tensor_key"}
    assert {"name": "value", "dtype": "float64"} in inputs["scale"]
    nulls = {f["name"] for f in info["features"] if f.get("dtype") == "null"}
    assert nulls == {"solution", "evaluation"}


def test_a_definition_without_workloads_gets_a_note_not_a_config(toy_root):
    extra = dict(TOY_DEFINITION, name="toy_linear_unbuilt")
    write_json(toy_root / "definitions/toy/toy_linear_unbuilt.json", extra)
    text, notes = card.render(toy_root, HEAD)
    assert "toy_linear_unbuilt" not in [c["config_name"] for c in front(text)["configs"]]
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


def test_check_mode_reports_stale_readme(toy_root, capsys):
    (toy_root / "README.md").write_text(HEAD)
    assert cli_main(["--root", str(toy_root), "card", "--check"]) == 1
    assert cli_main(["--root", str(toy_root), "card"]) == 0
    assert cli_main(["--root", str(toy_root), "card", "--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_malformed_catalogue_file_is_named(toy_root):
    (toy_root / "tasks/broken.json").write_text("{not json")
    with pytest.raises(DataError, match=r"tasks/broken.json:1: malformed JSON"):
        card.render(toy_root, HEAD)
    json.loads((toy_root / "tasks/toy_linear_n8_k16.json").read_text())  # untouched
