"""The SGLang interface audit: the file validates, covers every definition, renders to the
committed README, and every cited call site exists in the pinned wheel.

The wheel is read offline from ``.cache/wheels`` (``.ci/setup --test`` downloads it). Its
absence is a failure with instructions, never a skip: an audit whose citations are not
checked is the thing this test exists to prevent.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hf_eval.checker import check_interface_audit
from hf_eval.dataset import open_dataset
from hf_eval.errors import DataError
from hf_eval.interfaces import (
    AUDIT_PATH,
    README_PATH,
    InterfaceAudit,
    _definitions_in,
    coverage_problems,
    find_wheel,
    load_audit,
    pointer_tag,
    verify_against_wheel,
)
from hf_eval.interfaces_readme import render
from tests.conftest import write_json

REPO = Path(__file__).resolve().parent.parent
TOY = "toy_linear_n8_k16"


@pytest.fixture(scope="module")
def audit() -> InterfaceAudit:
    return load_audit(REPO / AUDIT_PATH)


@pytest.fixture(scope="module")
def wheel(audit: InterfaceAudit) -> Path:
    try:
        return find_wheel(REPO, audit)
    except DataError as err:
        pytest.fail(str(err), pytrace=False)


def repo_definitions() -> dict[str, dict]:
    return {json.loads(p.read_text())["name"]: json.loads(p.read_text())
            for p in sorted((REPO / "definitions").glob("*/*.json"))}


# ------------------------------------------------------------------ the committed audit
def test_one_entry_per_definition(audit):
    names = repo_definitions()
    assert len(names) == 21
    assert coverage_problems(audit, names) == []


def test_every_definition_points_to_its_entry():
    for name, definition in repo_definitions().items():
        assert pointer_tag(name) in definition["tags"], name


def test_checker_rule_passes_on_the_repository():
    assert [str(p) for p in check_interface_audit(open_dataset(REPO))] == []


def test_readme_is_rendered_from_the_json(audit):
    assert (REPO / README_PATH).read_text() == render(audit), \
        "run `python -m hf_eval interfaces render`"


def test_file_is_canonical(audit):
    """Entries sorted, two-space JSON: diffs of the audit stay reviewable."""
    from hf_eval.interfaces import dump

    assert (REPO / AUDIT_PATH).read_text() == dump(audit)


def test_every_call_site_exists_in_the_pinned_wheel(audit, wheel):
    assert verify_against_wheel(audit, wheel) == []


# ---------------------------------------------------------------- wheel verification
def _with_site(audit: InterfaceAudit, **changes) -> InterfaceAudit:
    data = audit.model_dump(mode="json")
    data["entries"][0]["call_sites"][0].update(changes)
    return InterfaceAudit.model_validate(data)


def test_a_line_outside_the_function_is_rejected(audit, wheel):
    site = audit.entries[0].call_sites[0]
    bad = _with_site(audit, line=1)
    problems = verify_against_wheel(bad, wheel)
    spans = _definitions_in(_read(wheel, site.file))
    start, end = spans[site.function]
    assert problems == [f"{audit.entries[0].definition}: call_sites.0: line 1 is outside "
                        f"{site.function} ({site.file}:{start}-{end})"]


def test_an_unknown_function_is_rejected(audit, wheel):
    site = audit.entries[0].call_sites[0]
    problems = verify_against_wheel(_with_site(audit, function="no_such_function"), wheel)
    assert problems == [f"{audit.entries[0].definition}: call_sites.0: no_such_function is "
                        f"not defined in {site.file}"]


def test_a_missing_file_is_rejected(audit, wheel):
    problems = verify_against_wheel(_with_site(audit, file="sglang/no_such_module.py"), wheel)
    assert problems == [f"{audit.entries[0].definition}: call_sites.0: "
                        f"sglang/no_such_module.py is not in {wheel.name}"]


def test_another_wheel_is_rejected(audit, tmp_path):
    other = tmp_path / audit.engine.wheel
    other.write_bytes(b"not the pinned wheel")
    problems = verify_against_wheel(audit, other)
    assert len(problems) == 1 and "is not the recorded" in problems[0]


def test_a_missing_wheel_says_how_to_get_it(audit, tmp_path):
    with pytest.raises(DataError) as err:
        find_wheel(tmp_path, audit)
    assert "run `.ci/setup --test`" in str(err.value)
    assert "pip download --no-deps sglang==0.5.23 -d .cache/wheels" in str(err.value)


def test_qualified_names_include_methods_nested_and_decorated_defs():
    source = ("import functools\n"          # 1
              "class A:\n"                   # 2
              "    @functools.cache\n"       # 3
              "    def f(self):\n"           # 4
              "        def g():\n"           # 5
              "            return 1\n"       # 6
              "        return g\n"           # 7
              "if True:\n"                   # 8
              "    def h():\n"               # 9
              "        pass\n")              # 10
    spans = _definitions_in(source)
    assert spans == {"A": (2, 7), "A.f": (3, 7), "A.f.g": (5, 6), "h": (9, 10)}


def _read(wheel: Path, member: str) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        return archive.read(member).decode()


# ------------------------------------------------------------------- model rules
def _entry_data(audit: InterfaceAudit) -> dict:
    return copy.deepcopy(audit.model_dump(mode="json"))


def _load(tmp_path: Path, data: dict) -> InterfaceAudit:
    path = tmp_path / "interfaces.json"
    path.write_text(json.dumps(data))
    return load_audit(path)


def test_drop_in_with_a_value_changing_adapter_is_rejected(audit, tmp_path):
    data = _entry_data(audit)
    entry = next(e for e in data["entries"] if not e["drop_in"]["verdict"]
                 and any(a["changes_values"] for a in e["adapters"]))
    entry["drop_in"]["verdict"] = True
    changing = [a["name"] for a in entry["adapters"] if a["changes_values"]]
    with pytest.raises(DataError) as err:
        _load(tmp_path, data)
    assert str(err.value) == (f"{tmp_path / 'interfaces.json'}: entries[{entry['definition']}]: "
                              f"drop_in is true but adapters change values: {changing}")


def test_exactly_one_boundary_call_site(audit, tmp_path):
    data = _entry_data(audit)
    for site in data["entries"][0]["call_sites"]:
        site["boundary"] = True
    with pytest.raises(DataError) as err:
        _load(tmp_path, data)
    n = len(data["entries"][0]["call_sites"])
    assert str(err.value).endswith(f"entries[{data['entries'][0]['definition']}]: exactly one "
                                   f"call site must be the boundary, found {n}")


def test_unknown_keys_and_bad_paths_are_rejected(audit, tmp_path):
    data = _entry_data(audit)
    data["entries"][0]["call_sites"][0]["lien"] = 3
    with pytest.raises(DataError, match=r"call_sites\.0\.lien: Extra inputs are not permitted"):
        _load(tmp_path, data)
    data = _entry_data(audit)
    data["entries"][0]["call_sites"][0]["file"] = "../sglang/x.py"
    with pytest.raises(DataError, match="must be a relative path inside the wheel"):
        _load(tmp_path, data)


def _baseline_error(tmp_path, data: dict, name: str) -> str:
    with pytest.raises(DataError) as err:
        _load(tmp_path, data)
    return str(err.value).split(f"entries[{name}]")[1]


def test_engine_baseline_rules(audit, tmp_path):
    """A baseline without a solution says why; why_not only without one; a path off sm_90
    says what it needs; the path names are a closed list."""
    data = _entry_data(audit)
    entry = next(e for e in data["entries"] if e["engine_baseline"].get("solution"))
    name, baseline = entry["definition"], entry["engine_baseline"]
    solution = baseline.pop("solution")
    assert _baseline_error(tmp_path, data, name) == (
        ".engine_baseline: an engine baseline without a solution must say why_not")
    baseline.update(solution=solution, why_not="because")
    assert _baseline_error(tmp_path, data, name) == (
        f".engine_baseline: why_not is for entries without a solution; this one has "
        f"{solution!r}")
    baseline.pop("why_not")
    baseline.update(runs_on_sm90="no", needs=[])
    assert _baseline_error(tmp_path, data, name) == (
        ".engine_baseline: an engine path that does not run on sm_90 must say what it needs")
    baseline.update(runs_on_sm90="yes", through=["cuda_magic"])
    assert _baseline_error(tmp_path, data, name).startswith(".engine_baseline.through.0: ")
    baseline["through"] = []
    assert "at least 1 item" in _baseline_error(tmp_path, data, name)


def test_every_entry_records_its_sm90_path(audit):
    """What the issue asks of every boundary: runs on sm_90 or not, through what, and a
    solution or the reason there is none."""
    for entry in audit.entries:
        b = entry.engine_baseline
        assert b.through and (b.solution or b.why_not), entry.definition
        if b.runs_on_sm90 == "no":
            assert b.solution is None and b.needs, entry.definition


def test_duplicate_entries_are_rejected(audit, tmp_path):
    data = _entry_data(audit)
    data["entries"].insert(1, copy.deepcopy(data["entries"][0]))
    with pytest.raises(DataError, match=r"more than one entry for \['"):
        _load(tmp_path, data)


# ------------------------------------------------------------- the checker's rule
def _toy_audit(audit: InterfaceAudit) -> dict:
    """The first real entry, renamed to the toy definition (a valid, self-consistent entry)."""
    data = _entry_data(audit)
    entry = data["entries"][0]
    entry["definition"] = TOY
    entry["engine_baseline"].pop("solution", None)
    entry["engine_baseline"]["why_not"] = "a toy definition has no engine"
    return {"engine": data["engine"], "entries": [entry]}


def _tag_toy(root: Path) -> None:
    path = root / f"definitions/toy/{TOY}.json"
    definition = json.loads(path.read_text())
    definition["tags"].append(pointer_tag(TOY))
    write_json(path, definition)


def _check(root: Path) -> list[str]:
    return [str(p) for p in check_interface_audit(open_dataset(root))]


def test_a_dataset_without_an_audit_is_not_required_to_have_one(toy_root):
    assert _check(toy_root) == []


def test_a_tagged_definition_requires_the_file(toy_root):
    _tag_toy(toy_root)
    assert _check(toy_root) == [f"{AUDIT_PATH}: file not found"]


def test_a_missing_entry_is_reported(toy_root, audit):
    _tag_toy(toy_root)
    data = _toy_audit(audit)
    data["entries"][0]["definition"] = "another_definition"
    write_json(toy_root / AUDIT_PATH, data)
    assert _check(toy_root) == [
        f"{AUDIT_PATH}: entries: no entry for definition '{TOY}'",
        f"{AUDIT_PATH}: entries: entry for unknown definition 'another_definition'",
    ]


def test_a_missing_pointer_tag_is_reported(toy_root, audit):
    write_json(toy_root / AUDIT_PATH, _toy_audit(audit))
    assert _check(toy_root) == [
        f"definitions/toy/{TOY}.json: tags: no tag '{pointer_tag(TOY)}' pointing to its "
        "interface-audit entry"]


def test_a_clean_toy_audit_passes_and_a_bad_baseline_is_reported(toy_root, audit):
    _tag_toy(toy_root)
    data = _toy_audit(audit)
    write_json(toy_root / AUDIT_PATH, data)
    assert _check(toy_root) == []
    data["entries"][0]["engine_baseline"]["solution"] = "no_such_solution"
    data["entries"][0]["engine_baseline"].pop("intended_solution", None)
    data["entries"][0]["engine_baseline"].pop("why_not", None)
    write_json(toy_root / AUDIT_PATH, data)
    task = json.loads((toy_root / f"tasks/{TOY}.json").read_text())
    write_json(toy_root / f"tasks/{TOY}.json", {**task, "engine_baseline": "no_such_solution"})
    assert _check(toy_root) == [f"{AUDIT_PATH}: {TOY}.engine_baseline.solution: unknown "
                                "solution 'no_such_solution'"]


def test_the_task_and_the_audit_name_the_same_engine_baseline(toy_root, audit):
    _tag_toy(toy_root)
    data = _toy_audit(audit)
    data["entries"][0]["engine_baseline"].pop("why_not")
    data["entries"][0]["engine_baseline"]["solution"] = "torch_toy"
    write_json(toy_root / AUDIT_PATH, data)
    assert _check(toy_root) == [
        f"tasks/{TOY}.json: engine_baseline: engine_baseline None differs from the interface "
        f"audit's 'torch_toy' ({AUDIT_PATH})"]
    task = json.loads((toy_root / f"tasks/{TOY}.json").read_text())
    write_json(toy_root / f"tasks/{TOY}.json", {**task, "engine_baseline": "torch_toy"})
    assert _check(toy_root) == []


def test_an_invalid_file_is_one_line(toy_root, audit):
    _tag_toy(toy_root)
    data = _toy_audit(audit)
    data["entries"][0]["call_sites"][0]["line"] = 0
    write_json(toy_root / AUDIT_PATH, data)
    assert _check(toy_root) == [f"{AUDIT_PATH}: entries[{TOY}].call_sites.0.line: Input should "
                                "be greater than or equal to 1"]
