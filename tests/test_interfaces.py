"""The SGLang interface audit: the published file (``interfaces.json``, the published
dataset's schema) and the project's reading of the pinned wheel validate, cover every
definition, agree with each other and with the definitions, round-trip byte for byte,
render to the committed README, and every cited file, function and line exists in the
pinned wheel.

The wheel is read offline from ``.cache/wheels`` (``.ci/setup --test`` downloads it). Its
absence is a failure with instructions, never a skip: an audit whose citations are not
checked is the thing this test exists to prevent.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from hf_eval.checker import check_interface_audit
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from hf_eval.interfaces.audit import (
    AUDIT_PATH,
    NOT_AUDITED_TAG,
    READING_PATH,
    README_PATH,
    InterfaceAudit,
    WheelReading,
    _definitions_in,
    coverage_problems,
    dump,
    find_wheel,
    load_audit,
    load_reading,
    parse_source,
    pointer_tag,
    verify_against_wheel,
)
from hf_eval.interfaces.readme import render
from tests.conftest import write_json

REPO = Path(__file__).resolve().parent.parent
TOY = "toy_linear_n8_k16"
STRUCTURAL = "structural_adapter_required"


@pytest.fixture(scope="module")
def audit() -> InterfaceAudit:
    return load_audit(REPO / AUDIT_PATH)


@pytest.fixture(scope="module")
def reading() -> WheelReading:
    return load_reading(REPO / READING_PATH)


@pytest.fixture(scope="module")
def wheel(reading: WheelReading) -> Path:
    try:
        return find_wheel(REPO, reading)
    except DataError as err:
        pytest.fail(str(err), pytrace=False)


def repo_definitions() -> dict[str, dict]:
    return {json.loads(p.read_text())["name"]: json.loads(p.read_text())
            for p in sorted((REPO / "definitions").glob("*/*.json"))}


# ------------------------------------------------------------------ the committed audit
def test_one_entry_per_definition_in_both_files(audit, reading):
    names = repo_definitions()
    assert len(names) == 21
    published = [e.definition for e in audit.definitions]
    assert sorted(published) == sorted(names) and len(published) == len(set(published))
    assert coverage_problems(published, names) == []
    assert coverage_problems([e.definition for e in reading.entries], names) == []


def test_the_audit_names_its_wheel_reading(audit):
    assert audit.wheel_reading == READING_PATH


def test_inputs_are_the_definitions_inputs_in_order(audit):
    names = repo_definitions()
    for e in audit.definitions:
        assert e.inputs == list(names[e.definition]["inputs"]), e.definition


def test_counts_are_the_tally_of_the_boundary_classes(audit):
    """Counted here from the raw file, independently of the model's rule."""
    raw = json.loads((REPO / AUDIT_PATH).read_text())
    tally = Counter(e["boundary"] for e in raw["definitions"])
    assert raw["counts"] == dict(tally)
    assert sum(raw["counts"].values()) == 21


def test_all_drop_in_is_false_because_structural_adapters_remain(audit):
    raw = json.loads((REPO / AUDIT_PATH).read_text())
    structural = [e["definition"] for e in raw["definitions"] if e["boundary"] == STRUCTURAL]
    assert raw["all_drop_in"] is (not structural) and structural
    assert raw["full_engine_substitution_tested"] is False


def test_published_classifications_recorded(audit):
    """Classes the published audit gives and the wheel reading supports: sparse MLA
    prefill needs a structural adapter (its 64 heads gather four ranks' 16), and no
    boundary is integration-verified."""
    for name in ("sparse_mla_prefill_h64_d512_k128", "sparse_mla_prefill_h64_d512_k640"):
        assert audit.entry(name).boundary == STRUCTURAL
    assert not any(e.integration_verified for e in audit.definitions)


def test_every_entry_has_wheel_evidence(audit):
    for e in audit.definitions:
        assert e.wheel_evidence, e.definition


def test_every_definition_points_to_its_entry():
    for name, definition in repo_definitions().items():
        assert pointer_tag(name) in definition["tags"], name


def test_checker_rule_passes_on_the_repository():
    assert [str(p) for p in check_interface_audit(open_dataset(REPO))] == []


def test_readme_is_rendered_from_the_json(audit, reading):
    assert (REPO / README_PATH).read_text() == render(audit, reading), \
        "run `python -m hf_eval interfaces render`"


def test_both_files_round_trip_byte_for_byte(audit, reading):
    """Load, then dump: the same bytes (the published file's key order is kept)."""
    assert dump(audit) == (REPO / AUDIT_PATH).read_text()
    assert dump(reading) == (REPO / READING_PATH).read_text()


def test_every_citation_exists_in_the_pinned_wheel(audit, reading, wheel):
    assert verify_against_wheel(reading, wheel, audit) == []


def test_the_cli_render_check_and_verify_pass_on_the_repository(capsys):
    from hf_eval.cli import main

    assert main(["--root", str(REPO), "interfaces", "render", "--check"]) == 0
    assert main(["--root", str(REPO), "interfaces", "verify"]) == 0
    err = capsys.readouterr().err
    assert err.strip().endswith("21 source links, 0 problem(s)")


def test_every_source_link_is_a_plausible_path(audit):
    for e in audit.definitions:
        commit, path, line = parse_source(e.source)
        assert commit == audit.sglang_audit_commit
        assert path.startswith("sglang/") and path.endswith(".py")
        assert line is None or line >= 1


# ------------------------------------------------------- the published schema, unchanged
def _published_layout() -> dict:
    """A file in the published layout, written here with placeholder prose, unknown keys
    at several levels and positions, and the key order of the published file."""
    commit = "1" * 40
    entry = {
        "definition": "d_one", "inputs": ["A", "W"], "integration_verified": False,
        "boundary": "reshaped_tensor_operands", "native_call": "f(a, w)",
        "source": f"https://github.com/sgl-project/sglang/blob/{commit}/python/sglang/x.py",
        "adaptation": "placeholder", "next_step": "placeholder",
    }
    other = {**entry, "definition": "d_two", "boundary": STRUCTURAL,
             "source": entry["source"] + "#L12", "capture_recipe_note": "placeholder",
             "zz_unknown": {"b": 1, "a": [2, 3]}}
    return {"date": "2026-01-02", "sglang_capture_commit": "2" * 40,
            "sglang_audit_commit": commit, "all_drop_in": False,
            "full_engine_substitution_tested": False,
            "counts": {"reshaped_tensor_operands": 1, STRUCTURAL: 1},
            "definitions": [{"unknown_first": "é", **entry}, other],
            "snapshot_limit": "placeholder", "trailing_unknown": None}


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_a_published_layout_file_round_trips_unknown_keys_and_order(tmp_path, ensure_ascii):
    text = json.dumps(_published_layout(), indent=2, ensure_ascii=ensure_ascii) + "\n"
    path = tmp_path / "interfaces.json"
    path.write_text(text)
    loaded = load_audit(path)
    again = json.dumps(loaded.to_json(), indent=2, ensure_ascii=ensure_ascii) + "\n"
    assert again == text
    assert loaded.definitions[1].model_extra == {"zz_unknown": {"b": 1, "a": [2, 3]}}
    if not ensure_ascii:
        assert dump(loaded) == text


def _published_error(tmp_path, data: dict) -> str:
    path = tmp_path / "interfaces.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError) as err:
        load_audit(path)
    return str(err.value).removeprefix(f"{path}: ")


def test_counts_that_are_not_the_tally_are_rejected(tmp_path):
    data = _published_layout()
    data["counts"] = {"reshaped_tensor_operands": 2}
    assert _published_error(tmp_path, data) == (
        "counts {'reshaped_tensor_operands': 2} are not the tally of the entries' boundary "
        "classes {'reshaped_tensor_operands': 1, 'structural_adapter_required': 1}")


def test_all_drop_in_must_match_the_classes(tmp_path):
    data = _published_layout()
    data["all_drop_in"] = True
    assert _published_error(tmp_path, data) == (
        "all_drop_in is true, but not every boundary is drop-in")
    data = _published_layout()
    data["definitions"][1]["boundary"] = "specialized_leaf_operands"
    data["counts"] = {"reshaped_tensor_operands": 1, "specialized_leaf_operands": 1}
    assert _published_error(tmp_path, data) == (
        "all_drop_in is false, but every boundary is drop-in")


def test_an_unknown_boundary_class_names_the_entry(tmp_path):
    data = _published_layout()
    data["definitions"][1]["boundary"] = "drop_in"
    assert _published_error(tmp_path, data).startswith("definitions[d_two].boundary: Input "
                                                       "should be")


def test_a_source_at_another_commit_or_outside_sglang_is_rejected(tmp_path):
    data = _published_layout()
    data["definitions"][0]["source"] = data["definitions"][0]["source"].replace("1" * 40,
                                                                                "3" * 40)
    assert _published_error(tmp_path, data) == (
        f"d_one: source points at {'3' * 40}, not at sglang_audit_commit {'1' * 40}")
    data = _published_layout()
    data["definitions"][0]["source"] = "https://example.com/x.py"
    assert _published_error(tmp_path, data).startswith(
        "definitions[d_one].source: source 'https://example.com/x.py' is not a link")


def test_a_missing_published_field_is_rejected(tmp_path):
    data = _published_layout()
    del data["definitions"][0]["next_step"]
    assert _published_error(tmp_path, data) == "definitions[d_one].next_step: Field required"


def test_a_disagreement_names_a_field_of_its_entry(tmp_path):
    data = _published_layout()
    data["definitions"][0]["wheel_disagreement"] = [
        {"field": "native_kal", "file": "sglang/x.py", "function": "f", "line": 1,
         "statement": "s"}]
    assert _published_error(tmp_path, data) == (
        "definitions[d_one]: wheel_disagreement names 'native_kal', which is not a field of "
        "this entry")
    data["definitions"][0]["wheel_disagreement"][0]["field"] = "native_call"
    path = tmp_path / "interfaces.json"
    path.write_text(json.dumps(data))
    assert load_audit(path).definitions[0].wheel_disagreement[0].field == "native_call"


def test_wheel_evidence_outside_the_wheel_is_rejected(tmp_path):
    data = _published_layout()
    data["definitions"][0]["wheel_evidence"] = [
        {"file": "../sglang/x.py", "function": "f", "line": 1, "statement": "s"}]
    assert "must be a relative path inside the wheel" in _published_error(tmp_path, data)


# ---------------------------------------------------------------- wheel verification
def _with_site(reading: WheelReading, **changes) -> WheelReading:
    data = reading.model_dump(mode="json")
    data["entries"][0]["call_sites"][0].update(changes)
    return WheelReading.model_validate(data)


def test_a_line_outside_the_function_is_rejected(reading, wheel):
    site = reading.entries[0].call_sites[0]
    bad = _with_site(reading, line=1)
    problems = verify_against_wheel(bad, wheel)
    spans = _definitions_in(_read(wheel, site.file))
    start, end = spans[site.function]
    assert problems == [f"{reading.entries[0].definition}: call_sites.0: line 1 is outside "
                        f"{site.function} ({site.file}:{start}-{end})"]


def test_an_unknown_function_is_rejected(reading, wheel):
    site = reading.entries[0].call_sites[0]
    problems = verify_against_wheel(_with_site(reading, function="no_such_function"), wheel)
    assert problems == [f"{reading.entries[0].definition}: call_sites.0: no_such_function is "
                        f"not defined in {site.file}"]


def test_a_missing_file_is_rejected(reading, wheel):
    problems = verify_against_wheel(_with_site(reading, file="sglang/no_such_module.py"), wheel)
    assert problems == [f"{reading.entries[0].definition}: call_sites.0: "
                        f"sglang/no_such_module.py is not in {wheel.name}"]


def test_another_wheel_is_rejected(reading, tmp_path):
    other = tmp_path / reading.engine.wheel
    other.write_bytes(b"not the pinned wheel")
    problems = verify_against_wheel(reading, other)
    assert len(problems) == 1 and "is not the recorded" in problems[0]


def test_a_missing_wheel_says_how_to_get_it(reading, tmp_path):
    with pytest.raises(DataError) as err:
        find_wheel(tmp_path, reading)
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


def test_published_evidence_and_sources_are_checked_in_the_wheel(audit, reading, wheel):
    data = copy.deepcopy(audit.to_json())
    first = data["definitions"][0]
    first["wheel_evidence"][0]["line"] = 1
    cited = first["wheel_evidence"][0]
    first["source"] = first["source"].split("/python/")[0] + "/python/sglang/no_such.py#L3"
    problems = verify_against_wheel(reading, wheel, InterfaceAudit.model_validate(data))
    span = _definitions_in(_read(wheel, cited["file"]))[cited["function"]]
    assert problems == [
        f"{first['definition']}: wheel_evidence.0: line 1 is outside {cited['function']} "
        f"({cited['file']}:{span[0]}-{span[1]})",
        f"{first['definition']}: source: sglang/no_such.py is not in {wheel.name}"]


def _read(wheel: Path, member: str) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        return archive.read(member).decode()


# ------------------------------------------------------------------- model rules
def _entry_data(reading: WheelReading) -> dict:
    return copy.deepcopy(reading.model_dump(mode="json"))


def _load(tmp_path: Path, data: dict) -> WheelReading:
    path = tmp_path / "interfaces.json"
    path.write_text(json.dumps(data))
    return load_reading(path)


def test_exactly_one_boundary_call_site(reading, tmp_path):
    data = _entry_data(reading)
    for site in data["entries"][0]["call_sites"]:
        site["boundary"] = True
    with pytest.raises(DataError) as err:
        _load(tmp_path, data)
    n = len(data["entries"][0]["call_sites"])
    assert str(err.value).endswith(f"entries[{data['entries'][0]['definition']}]: exactly one "
                                   f"call site must be the boundary, found {n}")


def test_unknown_keys_and_bad_paths_are_rejected(reading, tmp_path):
    data = _entry_data(reading)
    data["entries"][0]["call_sites"][0]["lien"] = 3
    with pytest.raises(DataError, match=r"call_sites\.0\.lien: Extra inputs are not permitted"):
        _load(tmp_path, data)
    data = _entry_data(reading)
    data["entries"][0]["call_sites"][0]["file"] = "../sglang/x.py"
    with pytest.raises(DataError, match="must be a relative path inside the wheel"):
        _load(tmp_path, data)


def _baseline_error(tmp_path, data: dict, name: str) -> str:
    with pytest.raises(DataError) as err:
        _load(tmp_path, data)
    return str(err.value).split(f"entries[{name}]")[1]


def test_engine_baseline_rules(reading, tmp_path):
    """A baseline without a solution says why; why_not only without one; a path off sm_90
    says what it needs; the path names are a closed list."""
    data = _entry_data(reading)
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


def test_every_entry_records_its_sm90_path(reading):
    """What the issue asks of every boundary: runs on sm_90 or not, through what, and a
    solution or the reason there is none."""
    for entry in reading.entries:
        b = entry.engine_baseline
        assert b.through and (b.solution or b.why_not), entry.definition
        if b.runs_on_sm90 == "no":
            assert b.solution is None and b.needs, entry.definition


def test_duplicate_entries_are_rejected(reading, tmp_path):
    data = _entry_data(reading)
    data["entries"].insert(1, copy.deepcopy(data["entries"][0]))
    with pytest.raises(DataError, match=r"more than one entry for \['"):
        _load(tmp_path, data)


# ------------------------------------------------------------- the checker's rule
def _toy_files(audit: InterfaceAudit, reading: WheelReading) -> tuple[dict, dict]:
    """The first real entries of both files, renamed to the toy definition (valid and
    self-consistent)."""
    published = copy.deepcopy(audit.to_json())
    entry = next(e for e in published["definitions"]
                 if e["boundary"] == "reshaped_tensor_operands")
    entry.update(definition=TOY, inputs=["x", "w", "scale"])
    published.update(definitions=[entry], counts={"reshaped_tensor_operands": 1},
                     all_drop_in=True)
    data = _entry_data(reading)
    wheel_entry = data["entries"][0]
    wheel_entry["definition"] = TOY
    wheel_entry["engine_baseline"].pop("solution", None)
    wheel_entry["engine_baseline"]["why_not"] = "a toy definition has no engine"
    return published, {"engine": data["engine"], "entries": [wheel_entry]}


def _write(root: Path, published: dict, wheel_reading: dict) -> None:
    write_json(root / AUDIT_PATH, published)
    write_json(root / READING_PATH, wheel_reading)


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


def test_a_missing_entry_is_reported_in_either_file(toy_root, audit, reading):
    _tag_toy(toy_root)
    for edited, path, field in ((0, AUDIT_PATH, "definitions"), (1, READING_PATH, "entries")):
        files = _toy_files(audit, reading)  # (published, wheel_reading)
        files[edited][field][0]["definition"] = "another_definition"
        _write(toy_root, *files)
        assert _check(toy_root) == [
            f"{path}: {field}: no entry for definition '{TOY}'",
            f"{path}: {field}: entry for unknown definition 'another_definition'",
        ]


def test_a_published_audit_without_a_wheel_reading_is_checked_alone(toy_root, audit,
                                                                     reading):
    _tag_toy(toy_root)
    published, _ = _toy_files(audit, reading)
    del published["wheel_reading"]
    write_json(toy_root / AUDIT_PATH, published)
    assert _check(toy_root) == []


def test_inputs_other_than_the_definitions_are_reported(toy_root, audit, reading):
    _tag_toy(toy_root)
    published, wheel_reading = _toy_files(audit, reading)
    published["definitions"][0]["inputs"] = ["w", "x", "scale"]
    _write(toy_root, published, wheel_reading)
    assert _check(toy_root) == [
        f"{AUDIT_PATH}: definitions[{TOY}].inputs: inputs ['w', 'x', 'scale'] are not the "
        "definition's ['x', 'w', 'scale']"]


def test_a_missing_pointer_tag_is_reported(toy_root, audit, reading):
    _write(toy_root, *_toy_files(audit, reading))
    assert _check(toy_root) == [
        f"definitions/toy/{TOY}.json: tags: no tag '{pointer_tag(TOY)}' pointing to its "
        "interface-audit entry"]


def _add_unaudited(root: Path, tags: list[str]) -> str:
    """A second definition (the toy's, renamed) with ``tags``: its name."""
    name = "toy_unaudited_n8_k16"
    definition = json.loads((root / f"definitions/toy/{TOY}.json").read_text())
    write_json(root / f"definitions/toy/{name}.json", {**definition, "name": name,
                                                        "tags": tags})
    return name


def test_a_definition_tagged_not_audited_needs_no_entry_and_may_have_none(toy_root, audit,
                                                                         reading):
    _tag_toy(toy_root)
    published, data = _toy_files(audit, reading)
    _write(toy_root, published, data)
    name = _add_unaudited(toy_root, ["status:test", NOT_AUDITED_TAG])
    assert _check(toy_root) == []
    _add_unaudited(toy_root, ["status:test"])  # neither the tag nor an entry
    assert _check(toy_root) == [
        f"{AUDIT_PATH}: definitions: no entry for definition '{name}'",
        f"definitions/toy/{name}.json: tags: no tag '{pointer_tag(name)}' pointing to its "
        "interface-audit entry",
        f"{READING_PATH}: entries: no entry for definition '{name}'"]
    _add_unaudited(toy_root, ["status:test", NOT_AUDITED_TAG, pointer_tag(name)])
    published["definitions"].append({**published["definitions"][0], "definition": name})
    published["counts"] = {"reshaped_tensor_operands": 2}
    data["entries"].append({**data["entries"][0], "definition": name})
    _write(toy_root, published, data)
    assert _check(toy_root) == [
        f"{AUDIT_PATH}: definitions: entry for definition '{name}', which is tagged "
        f"'{NOT_AUDITED_TAG}'",
        f"definitions/toy/{name}.json: tags: tag '{pointer_tag(name)}' points to an entry of "
        f"a definition tagged '{NOT_AUDITED_TAG}'",
        f"{READING_PATH}: entries: entry for definition '{name}', which is tagged "
        f"'{NOT_AUDITED_TAG}'"]


def test_a_clean_toy_audit_passes_and_a_bad_baseline_is_reported(toy_root, audit, reading):
    _tag_toy(toy_root)
    published, data = _toy_files(audit, reading)
    _write(toy_root, published, data)
    assert _check(toy_root) == []
    data["entries"][0]["engine_baseline"]["solution"] = "no_such_solution"
    data["entries"][0]["engine_baseline"].pop("intended_solution", None)
    data["entries"][0]["engine_baseline"].pop("why_not", None)
    _write(toy_root, published, data)
    task = json.loads((toy_root / f"tasks/{TOY}.json").read_text())
    write_json(toy_root / f"tasks/{TOY}.json", {**task, "engine_baseline": "no_such_solution"})
    assert _check(toy_root) == [f"{READING_PATH}: {TOY}.engine_baseline.solution: unknown "
                                "solution 'no_such_solution'"]


def test_the_task_and_the_audit_name_the_same_engine_baseline(toy_root, audit, reading):
    _tag_toy(toy_root)
    published, data = _toy_files(audit, reading)
    data["entries"][0]["engine_baseline"].pop("why_not")
    data["entries"][0]["engine_baseline"]["solution"] = "torch_toy"
    _write(toy_root, published, data)
    assert _check(toy_root) == [
        f"tasks/{TOY}.json: engine_baseline: engine_baseline None differs from the interface "
        f"audit's 'torch_toy' ({READING_PATH})"]
    task = json.loads((toy_root / f"tasks/{TOY}.json").read_text())
    write_json(toy_root / f"tasks/{TOY}.json", {**task, "engine_baseline": "torch_toy"})
    assert _check(toy_root) == []


def test_an_invalid_file_is_one_line(toy_root, audit, reading):
    _tag_toy(toy_root)
    published, data = _toy_files(audit, reading)
    data["entries"][0]["call_sites"][0]["line"] = 0
    _write(toy_root, published, data)
    assert _check(toy_root) == [f"{READING_PATH}: entries[{TOY}].call_sites.0.line: Input "
                                "should be greater than or equal to 1"]
    published["counts"] = {"reshaped_tensor_operands": 2}
    _write(toy_root, published, data)
    assert _check(toy_root) == [
        f"{AUDIT_PATH}: counts {{'reshaped_tensor_operands': 2}} are not the tally of the "
        "entries' boundary classes {'reshaped_tensor_operands': 1}"]
