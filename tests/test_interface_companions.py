"""The interface audit's companion files: each committed file validates against its model
and agrees with the data it is drawn from (tasks, the wheel reading, the pinned wheel);
the QSA tie check is recomputed at the smallest capacity."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from hf_eval.data.errors import DataError
from hf_eval.interfaces.audit import READING_PATH, load_audit, load_reading
from hf_eval.interfaces.companions import (
    PREFERRED_PATH,
    QSA_TIES_PATH,
    SGLANG_RECHECK_PATH,
    UPSTREAM_RECHECK_PATH,
    UPSTREAMS_PATH,
    PreferredFile,
    QsaTies,
    SglangRecheck,
    UpstreamRecheck,
    UpstreamsFile,
    load_companion,
    qsa_tie_checks,
)

REPO = Path(__file__).resolve().parent.parent
FILES = {UPSTREAMS_PATH: UpstreamsFile, SGLANG_RECHECK_PATH: SglangRecheck,
         UPSTREAM_RECHECK_PATH: UpstreamRecheck, QSA_TIES_PATH: QsaTies,
         PREFERRED_PATH: PreferredFile}


@pytest.mark.parametrize("path", sorted(FILES))
def test_committed_file_validates(path):
    load_companion(FILES[path], REPO / path)


def test_an_unknown_key_is_one_clear_error(tmp_path):
    data = json.loads((REPO / QSA_TIES_PATH).read_text())
    data["checks"][0]["capcity"] = 1
    (tmp_path / "f.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"checks\.0\.capcity: Extra inputs are not permitted"):
        load_companion(QsaTies, tmp_path / "f.json")


def test_a_status_that_contradicts_the_results_is_rejected(tmp_path):
    data = json.loads((REPO / QSA_TIES_PATH).read_text())
    data["checks"][0]["solution_lower_ids_exact"] = False
    (tmp_path / "f.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="status must be 'failed' for these results"):
        load_companion(QsaTies, tmp_path / "f.json")


def test_preferred_entries_are_the_tasks_h200_choices():
    preferred = load_companion(PreferredFile, REPO / PREFERRED_PATH)
    tasks = {p.stem: json.loads(p.read_text()) for p in (REPO / "tasks").glob("*.json")}
    want = {n: t["preferred"]["h200"] for n, t in tasks.items() if "h200" in t["preferred"]}
    assert {p.definition: {"solution": p.solution, "evidence": p.evidence}
            for p in preferred.definitions} == want
    for p in preferred.definitions:
        solution = json.loads((REPO / p.path).read_text())
        assert solution["name"] == p.solution and solution["definition"] == p.definition


def test_upstreams_are_the_pins_of_the_wheel_reading():
    upstreams = load_companion(UpstreamsFile, REPO / UPSTREAMS_PATH)
    reading = load_reading(REPO / READING_PATH)
    pinned = {reading.engine.kernel_package, *reading.engine.pinned_dependencies}
    from_metadata = {u.pin for u in upstreams.libraries
                     if u.pinned_by == "sglang-0.5.23 METADATA"}
    assert from_metadata == pinned
    names = {e.definition for e in reading.entries}
    for u in upstreams.libraries:
        for p in u.definitions:
            entry = reading.entry(p.definition)
            assert p.definition in names
            assert p.provides in {k.name for k in entry.native_kernels}


def test_head_recheck_lines_are_where_the_wheel_defines_them():
    recheck = load_companion(SglangRecheck, REPO / SGLANG_RECHECK_PATH)
    audit = load_audit(REPO / "docs/interface-audit/interfaces.json")
    reading = load_reading(REPO / READING_PATH)
    assert recheck.base == audit.sglang_audit_commit
    assert recheck.head == reading.engine.wheel
    wheel = REPO / ".cache/wheels" / reading.engine.wheel
    if not wheel.is_file():
        pytest.fail(f"{wheel} is missing: run `.ci/setup --test`", pytrace=False)
    with zipfile.ZipFile(wheel) as archive:
        for f in recheck.files:
            assert f.in_wheel == (f.path in archive.namelist())
            if f.wheel_line is not None:
                lines = archive.read(f.path).decode().splitlines()
                name = f.wheel_function.rsplit(".", 1)[-1]
                assert (f"def {name}(" in lines[f.wheel_line - 1]
                        or f"class {name}" in lines[f.wheel_line - 1]), f
                assert (f.status == "same_line") == (f.wheel_line == f.cited_line)


def test_no_upstream_head_is_claimed_as_checked():
    recheck = load_companion(UpstreamRecheck, REPO / UPSTREAM_RECHECK_PATH)
    assert not any(r.head_checked for r in recheck.repositories)


def test_the_tie_rule_holds_when_every_score_is_equal():
    """Built here, independently of ``qsa_tie_checks``: all-zero keys, so every block
    scores the same and the lowest IDs must be chosen; the solution and the reference are
    run on it, and the committed smallest check is recomputed the same way."""
    import torch

    from hf_eval.data.sources import compile_reference, load_entry
    from hf_eval.dataset import open_dataset

    ds = open_dataset(REPO)
    definition = ds.definitions["qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"].value
    lengths = [0, 3, 600, 640]
    args = [torch.ones(4, 4, 128, dtype=torch.bfloat16),
            torch.zeros(10, 64, 128, dtype=torch.bfloat16),
            torch.arange(10, dtype=torch.int32).repeat(4, 1),
            torch.tensor(lengths, dtype=torch.int32)]
    want = torch.tensor([[-1] * 512, [0, 1, 2] + [-1] * 509, list(range(512)),
                         list(range(512))], dtype=torch.int32)
    for run in (compile_reference(definition),
                load_entry(ds.solutions["torch_gather_topk_qsa_index_h4"].value).run):
        out = run(*args)
        got = out[0] if isinstance(out, (tuple, list)) else out
        assert torch.equal(got.to(torch.int32), want)
    got = qsa_tie_checks(REPO, "torch_gather_topk_qsa_index_h4", ((64, (0, 1, 32, 64)),))
    committed = load_companion(QsaTies, REPO / QSA_TIES_PATH)
    assert got.checks[0] == committed.checks[0] and got.status == "passed"


def test_companions_check_passes_on_the_repository(capsys):
    from hf_eval.cli import main

    assert main(["--root", str(REPO), "interfaces", "companions", "--check"]) == 0
    assert "companion files are up to date" in capsys.readouterr().out


def test_companions_check_reports_a_stale_file_and_writes_nothing(tmp_path, monkeypatch,
                                                                   capsys):
    import hf_eval.interfaces.companions as companions
    from hf_eval.cli import main

    monkeypatch.setattr(companions, "build_all", lambda root, wheel=None: {"a.json": "{}\n"})
    (tmp_path / "a.json").write_text("{ }\n")
    assert main(["--root", str(tmp_path), "interfaces", "companions", "--check"]) == 1
    assert capsys.readouterr().err.strip() == (
        "a.json is out of date: run `python -m hf_eval interfaces companions`")
    assert (tmp_path / "a.json").read_text() == "{ }\n"
    assert main(["--root", str(tmp_path), "interfaces", "companions"]) == 0
    assert (tmp_path / "a.json").read_text() == "{}\n"
