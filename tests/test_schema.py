"""Schema: every repository file loads (in ours and in FlashInfer-Bench 0.1.2's models),
and each rule rejects a file that breaks it with a message naming file, line and field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hf_eval.data.errors import DataError
from hf_eval.data.schema import (
    Definition,
    Receipt,
    Solution,
    TaskConfig,
    WorkloadTrace,
    load_json,
    load_jsonl,
    parse,
)
from tests.conftest import GOOD_SOLUTION, REPO, TOY_DEFINITION, solution_json

DEFINITIONS = sorted((REPO / "definitions").rglob("*.json"))
SOLUTIONS = sorted((REPO / "solutions").rglob("*.json"))
WORKLOADS = sorted((REPO / "workloads").rglob("*.jsonl"))
TASKS = sorted((REPO / "tasks").glob("*.json"))


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


@pytest.mark.parametrize("path", DEFINITIONS, ids=ids(DEFINITIONS))
def test_repository_definitions_load_in_both_models(path):
    from flashinfer_bench.data import Definition as FibDefinition

    ours = load_json(Definition, path)
    theirs = FibDefinition.model_validate(json.loads(path.read_text()))
    assert list(theirs.inputs) == list(ours.inputs)


@pytest.mark.parametrize("path", SOLUTIONS, ids=ids(SOLUTIONS))
def test_repository_solutions_load_in_both_models(path):
    from flashinfer_bench.data import Solution as FibSolution

    load_json(Solution, path)
    FibSolution.model_validate(json.loads(path.read_text()))


@pytest.mark.parametrize("path", WORKLOADS, ids=ids(WORKLOADS))
def test_repository_workloads_load_in_both_models(path):
    from flashinfer_bench.data import Trace

    assert load_jsonl(WorkloadTrace, path)
    for line in path.read_text().splitlines():
        assert Trace.model_validate_json(line).is_workload_trace()


@pytest.mark.parametrize("path", TASKS, ids=ids(TASKS))
def test_repository_tasks_load(path):
    load_json(TaskConfig, path)


def test_repository_receipts_load():
    assert load_jsonl(Receipt, REPO / "captures.jsonl")


def test_repository_is_loadable_by_flashinfer_bench_traceset():
    from flashinfer_bench.data import TraceSet

    ts = TraceSet.from_path(str(REPO))
    assert set(ts.definitions) == {p.stem for p in DEFINITIONS}


# ------------------------------------------------------------------ one bad file per rule
def broken_definition(**changes) -> dict:
    data = copy.deepcopy(TOY_DEFINITION)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize("changes, field, rule", [
    ({"name": ""}, "name", "at least 1 character"),
    ({"reference": "def go(): pass"}, "reference", "top-level function named 'run'"),
    ({"reference": "def run(:"}, "reference", "valid Python"),
    ({"constraints": ["M >="]}, "constraints", "not a Python expression"),
    ({"outputs": {"x": {"shape": None, "dtype": "float32"}}}, None, "overlap"),
    ({"outputs": {"y": {"shape": ["Q"], "dtype": "float32"}}}, None, "undeclared axis 'Q'"),
    ({"inputs": {"x": {"shape": ["M"], "dtype": "uint8"}}}, "inputs.x.dtype", "Input should be"),
    ({"axes": {"M": {"type": "const"}}}, "axes.M.const.value", "Field required"),
    ({"axes": {"M": {"type": "fixed"}}}, "axes.M", "tag"),
    ({"op_type": None}, "op_type", "Field required"),
    ({"colour": "blue"}, "colour", "Extra inputs"),
])
def test_definition_rules(changes, field, rule):
    with pytest.raises(DataError) as info:
        parse(Definition, broken_definition(**changes), "definitions/toy/x.json")
    assert info.value.file == "definitions/toy/x.json"
    assert rule in info.value.rule
    if field:
        assert info.value.field == field


def broken_solution(path: str = "main.py", entry: str = "main.py::run", deps=("torch>=2.9",),
                    dps: bool = False, duplicate: bool = False) -> dict:
    data = solution_json("s", GOOD_SOLUTION)
    data["sources"][0]["path"] = path
    data["spec"].update(entry_point=entry, dependencies=list(deps), destination_passing_style=dps)
    if duplicate:
        data["sources"].append(dict(data["sources"][0]))
    return data


@pytest.mark.parametrize("kwargs, rule", [
    ({"path": "/abs/main.py", "entry": "/abs/main.py::run"}, "stay inside the package"),
    ({"path": "../main.py", "entry": "../main.py::run"}, "stay inside the package"),
    ({"entry": "main.py:run"}, "'<file>::<function>'"),
    ({"entry": "other.py::run"}, "entry file 'other.py'"),
    ({"deps": ["torch"]}, "must state a version"),
    ({"deps": ["torch >= = 2"]}, "not a valid requirement"),
    ({"dps": True}, "destination_passing_style must be false"),
    ({"duplicate": True}, "duplicate source path: main.py"),
])
def test_solution_rules(kwargs, rule):
    with pytest.raises(DataError, match=None) as info:
        parse(Solution, broken_solution(**kwargs), "solutions/toy/s.json")
    assert rule in info.value.rule


def test_workload_rules():
    good = {"definition": "d", "workload": {"uuid": "u", "axes": {"M": 1}, "inputs": {
        "x": {"type": "safetensors", "path": "blob/a.safetensors", "tensor_key": "x"}}},
        "solution": None, "evaluation": None}
    parse(WorkloadTrace, good, "w.jsonl", line=1)
    for bad, rule in [
        ({"axes": {"M": -1}}, "greater than or equal to 0"),
        ({"inputs": {"x": {"type": "safetensors", "path": "../a", "tensor_key": "x"}}},
         "relative path inside the dataset"),
        ({"inputs": {"x": {"type": "scalar", "value": "3"}}}, "Input should be"),
        ({"inputs": {"x": {"type": "url", "path": "a"}}}, "tag"),
    ]:
        data = copy.deepcopy(good)
        data["workload"].update(bad)
        with pytest.raises(DataError) as info:
            parse(WorkloadTrace, data, "w.jsonl", line=7)
        assert rule in info.value.rule and str(info.value).startswith("w.jsonl:7: workload.")


def test_task_rules():
    base = json.loads((REPO / "tests/data/task_example.json").read_text())
    parse(TaskConfig, base, "t.json")
    for change, rule in [
        ({"dev": [str(i) for i in range(11)]}, "at most 10"),
        ({"tolerance": {"atol": -1, "rtol": 0}}, "greater than or equal to 0"),
        ({"tolerance": {"atol": 0, "rtol": 0, "required_matched_ratio": 1.5}}, "less than"),
        ({"tolerance": {"atol": 0, "rtol": 0, "comparison": "close"}}, "Input should be"),
        ({"baseline": {"solution": "s", "timed": "sometimes"}}, "Input should be"),
        ({"workloads": []}, "at least 1 item"),
    ]:
        with pytest.raises(DataError) as info:
            parse(TaskConfig, {**base, **change}, "t.json")
        assert rule in info.value.rule


def test_receipt_needs_provenance_per_kind():
    parse(Receipt, {"uuid": "u", "definition": "d",
                    "provenance": {"kind": "generated", "generator": "g", "seed": 1}}, "c")
    with pytest.raises(DataError, match="needs seed"):
        parse(Receipt, {"uuid": "u", "definition": "d",
                        "provenance": {"kind": "generated", "generator": "g"}}, "c", line=3)
    with pytest.raises(DataError, match="needs program"):
        parse(Receipt, {"uuid": "u", "definition": "d", "provenance": {"kind": "captured"}}, "c")


def test_malformed_json_names_file_and_line(tmp_path):
    bad = tmp_path / "w.jsonl"
    bad.write_text('{"definition": "d"}\n{"definition": \n')
    with pytest.raises(DataError) as info:
        load_jsonl(WorkloadTrace, bad)
    assert info.value.line == 1 and "workload" in str(info.value)
    bad.write_text('\n{"definition": \n')
    with pytest.raises(DataError, match="malformed JSON") as info:
        load_jsonl(WorkloadTrace, bad)
    assert info.value.line == 2


# ------------------------------------------------------------------------- source paths
def two_sources(first: str, second: str, entry: str = "main.py") -> dict:
    data = solution_json("s", GOOD_SOLUTION)
    data["spec"]["entry_point"] = f"{entry}::run"
    data["sources"] = [{"path": first, "content": GOOD_SOLUTION},
                       {"path": second, "content": "def run(*args):\n    return None\n"}]
    return data


@pytest.mark.parametrize("first, second, message", [
    ("main.py", "./main.py", "duplicate source path after normalising: ./main.py and main.py"),
    ("./main.py", "main.py", "duplicate source path after normalising: ./main.py and main.py"),
    ("a//b.py", "a/b.py", "duplicate source path after normalising: a//b.py and a/b.py"),
    ("a/./b.py", "a/b.py/", "duplicate source path after normalising: a/./b.py and a/b.py/"),
])
def test_two_spellings_of_one_source_path_are_refused(first, second, message):
    with pytest.raises(DataError) as info:
        parse(Solution, two_sources(first, second), "solutions/toy/s.json")
    assert str(info.value) == f"solutions/toy/s.json: sources: {message}"


@pytest.mark.parametrize("path, rule", [
    ("", "String should have at least 1 character"),
    (".", "source path must name a file (not empty, not '.')"),
    ("./", "source path must name a file (not empty, not '.')"),
    ("/main.py", "source path must stay inside the package (no absolute path, no '..')"),
    ("//main.py", "source path must stay inside the package (no absolute path, no '..')"),
    ("a/../main.py", "source path must stay inside the package (no absolute path, no '..')"),
    ("a\\main.py", "source path must use '/' between directories (no backslash)"),
    ("main\x00.py", "source path must not hold control characters"),
    ("main\x1b[2J.py", "source path must not hold control characters"),
])
def test_source_paths_that_name_no_file_inside_the_package_are_refused(path, rule):
    with pytest.raises(DataError) as info:
        parse(Solution, two_sources("main.py", path), "solutions/toy/s.json")
    assert (info.value.field, info.value.rule) == ("sources.1.path", rule)


def test_source_paths_are_kept_normalised_and_the_entry_may_be_spelled_either_way():
    solution = parse(Solution, two_sources("./main.py", "lib//util.py", entry="./main.py"),
                     "solutions/toy/s.json")
    assert [s.path for s in solution.sources] == ["main.py", "lib/util.py"]


def test_the_solution_hash_is_the_hash_of_the_normalised_paths():
    from hf_eval.data.sources import solution_hash

    plain = parse(Solution, two_sources("main.py", "lib/util.py"), "s.json")
    spelled = parse(Solution, two_sources("./main.py", "lib//util.py"), "s.json")
    assert solution_hash(plain) == solution_hash(spelled)
    unvalidated = Solution.model_construct(**{
        **plain.__dict__, "sources": [type(s).model_construct(path="./" + s.path,
                                                              content=s.content)
                                      for s in plain.sources]})
    assert solution_hash(unvalidated) == solution_hash(plain)


def test_write_package_refuses_two_sources_in_one_file(tmp_path):
    from hf_eval.data.sources import write_package

    valid = parse(Solution, solution_json("s", GOOD_SOLUTION), "s.json")
    main = valid.sources[0]
    other = type(main).model_construct(path="./main.py", content="def run(): pass\n")
    unvalidated = Solution.model_construct(**{**valid.__dict__, "sources": [main, other]})
    with pytest.raises(DataError) as info:
        write_package(unvalidated, tmp_path)
    assert str(info.value) == ("solution s: sources[./main.py]: sources main.py and "
                               "./main.py would be written to one file")
    package = write_package(valid, tmp_path / "ok")
    assert (package / "main.py").read_text() == GOOD_SOLUTION


def test_write_package_refuses_a_source_that_is_already_another_ones_file(tmp_path):
    """What a case-insensitive file system does to ``Main.py`` and ``main.py``, made here
    with a hard link: the second source would overwrite the first."""
    from hf_eval.data.sources import solution_hash, write_package

    solution = parse(Solution, two_sources("main.py", "other.py"), "s.json")
    package = tmp_path / f"s-{solution_hash(solution)[:16]}"
    package.mkdir()
    (package / "main.py").write_text("")
    (package / "other.py").hardlink_to(package / "main.py")
    with pytest.raises(DataError) as info:
        write_package(solution, tmp_path)
    assert str(info.value) == ("solution s: sources[other.py]: sources main.py and other.py "
                               "would be written to one file")
