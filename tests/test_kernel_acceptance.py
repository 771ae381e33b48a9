"""The ``kernel_acceptance`` metric: ``evaluate.load("hf_eval/kernel_acceptance")`` offline.

Inputs are light handles (solution names, Solution JSON paths, outputs files, UUIDs);
judging goes through the audit and ``hf_eval.judge.acceptance`` (the same code, not a copy).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from hf_eval.data.errors import DataError
from hf_eval.data.sources import compile_reference
from hf_eval.dataset import open_dataset
from tests.conftest import GOOD_SOLUTION, REPO, solution_json, write_json

DEFINITION = "toy_linear_n8_k16"
WRONG = GOOD_SOLUTION.replace("* scale", "* scale * 1.5")


@pytest.fixture(scope="module")
def metric():
    """The metric loaded the documented way, from the repository root, offline."""
    import os

    import evaluate

    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_EVALUATE_OFFLINE")}
    os.environ.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        yield evaluate.load("hf_eval/kernel_acceptance")
    finally:
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def uuids(root: Path) -> list[str]:
    return [r.value.workload.uuid for r in open_dataset(root).workloads[DEFINITION]]


def reference_outputs(root: Path, index: int) -> dict[str, torch.Tensor]:
    dataset = open_dataset(root)
    definition = dataset.definition(DEFINITION)
    inputs = dataset.materialise_inputs(definition, dataset.workloads[DEFINITION][index])
    return dict(zip(definition.outputs, compile_reference(definition)(*inputs)))


def test_metric_describes_its_light_inputs(metric):
    assert set(metric.features) == {"predictions", "references"}
    assert all(f.dtype == "string" for f in metric.features.values())


def test_solution_by_name_is_accepted_on_every_workload(metric, toy_root):
    refs = uuids(toy_root)
    result = metric.compute(predictions=["torch_toy"] * len(refs), references=refs,
                            root=str(toy_root))
    assert result["accepted_fraction"] == 1.0 and result["total"] == 3
    assert [c["status"] for c in result["cases"]] == ["PASSED"] * 3
    assert all(c["error"] == "" and c["outputs"] for c in result["cases"])


def test_solution_json_path_outside_the_dataset_is_judged(metric, toy_root, tmp_path):
    path = tmp_path / "wrong.json"
    write_json(path, solution_json("wrong_toy", WRONG))
    refs = uuids(toy_root)
    result = metric.compute(predictions=[str(path), "torch_toy"], references=refs[1:],
                            root=str(toy_root), definition=DEFINITION)
    assert result["accepted_fraction"] == 0.5
    wrong = result["cases"][0]
    assert wrong["status"] == "INCORRECT_NUMERICAL" and "outside tolerance" in wrong["error"]


def test_outputs_files_are_compared_with_the_reference(metric, toy_root, tmp_path):
    refs = uuids(toy_root)
    good = reference_outputs(toy_root, 1)
    save_file(good, str(tmp_path / "good.safetensors"))
    bad = dict(good, y=(good["y"].float() * 1.5).to(torch.bfloat16))
    save_file(bad, str(tmp_path / "bad.safetensors"))
    save_file({"y": good["y"]}, str(tmp_path / "partial.safetensors"))
    result = metric.compute(
        predictions=[str(tmp_path / f"{n}.safetensors") for n in ("good", "bad", "partial")],
        references=[refs[1]] * 3, root=str(toy_root))
    statuses = [c["status"] for c in result["cases"]]
    assert statuses == ["PASSED", "INCORRECT_NUMERICAL", "INCORRECT_SHAPE"]
    assert result["accepted"] == 1 and result["accepted_fraction"] == pytest.approx(1 / 3)
    assert "positive_rows" in result["cases"][2]["error"]


def test_outputs_for_another_workload_fail_on_shape(metric, toy_root, tmp_path):
    refs = uuids(toy_root)
    save_file(reference_outputs(toy_root, 0), str(tmp_path / "row0.safetensors"))
    result = metric.compute(predictions=[str(tmp_path / "row0.safetensors")],
                            references=[refs[2]], root=str(toy_root))
    assert result["cases"][0]["status"] == "INCORRECT_SHAPE"


def test_unknown_workload_is_a_clear_error(metric, toy_root):
    with pytest.raises(DataError, match="'nope' is not a workload UUID"):
        metric.compute(predictions=["torch_toy"], references=["nope"], root=str(toy_root))


def test_suite_restricts_the_references(metric, toy_root):
    refs = uuids(toy_root)
    dev = json.loads((toy_root / f"tasks/{DEFINITION}.json").read_text())["dev"]
    outside = next(u for u in refs if u not in dev)
    with pytest.raises(DataError, match=f"{outside} is not in the 'dev' suite"):
        metric.compute(predictions=["torch_toy"], references=[outside], root=str(toy_root),
                       suite="dev")
    result = metric.compute(predictions=["torch_toy"], references=dev[:1],
                            root=str(toy_root), suite="dev")
    assert result["accepted_fraction"] == 1.0


def test_prediction_that_is_no_handle_is_refused(metric, toy_root):
    with pytest.raises(DataError, match="neither a solution of the dataset"):
        metric.compute(predictions=["no_such_solution"], references=uuids(toy_root)[:1],
                       root=str(toy_root))


STATUSES = ("PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
            "COMPILE_ERROR, TIMEOUT, DATA_ERROR")


def fake_audit(lines: list[dict], cause: Exception):
    """An ``Audit`` that writes ``lines`` to its report, then stops on ``cause``."""
    from hf_eval.judge.audit import AuditAborted

    class Stops:
        def __init__(self, dataset, config):
            self.report = config.report

        def run(self):
            self.report.write_text("".join(json.dumps(line) + "\n" for line in lines))
            aborted = AuditAborted(f"the audit stopped on cpu: {type(cause).__name__}: {cause}")
            aborted.__cause__ = cause
            raise aborted

    return Stops


def line(workload: str, status: str) -> dict:
    return {"definition": DEFINITION, "workload": workload, "solution": "torch_toy",
            "status": status, "reason": "" if status == "PASSED" else "why"}


def test_an_invalid_record_is_a_case_not_accepted_with_the_rule_as_its_error(
        metric, toy_root, monkeypatch):
    import sys

    from hf_eval.judge.records import RecordError

    refs = uuids(toy_root)
    cause = RecordError("status", f"must be one of {STATUSES} (got 'SKIPPED')")
    monkeypatch.setattr(sys.modules[type(metric).__module__], "Audit",
                        fake_audit([line(refs[0], "PASSED"), line(refs[1], "SKIPPED")], cause))
    result = metric.compute(predictions=["torch_toy"] * 3, references=refs,
                            root=str(toy_root))
    assert [(c["status"], c["error"]) for c in result["cases"]] == [
        ("PASSED", ""),
        ("INVALID_RECORD", "the audit's record of this case is not valid: status: must be "
         f"one of {STATUSES} (got 'SKIPPED')"),
        ("NOT_RUN", "the audit stopped before recording this case: the audit stopped on "
         f"cpu: RecordError: status: must be one of {STATUSES} (got 'SKIPPED')")]
    assert (result["accepted"], result["total"]) == (1, 3)


def test_any_other_stop_of_the_audit_is_raised(metric, toy_root, monkeypatch):
    import sys

    from hf_eval.judge.audit import AuditAborted

    refs = uuids(toy_root)
    monkeypatch.setattr(sys.modules[type(metric).__module__], "Audit",
                        fake_audit([], OSError(28, "No space left on device")))
    with pytest.raises(AuditAborted, match="No space left on device"):
        metric.compute(predictions=["torch_toy"], references=refs[:1], root=str(toy_root))


def test_space_files_are_shipped():
    space = REPO / "hf_eval/kernel_acceptance"
    card = (space / "README.md").read_text()
    assert "- evaluate" in card and "- metric" in card and "app_file: app.py" in card
    assert "launch_gradio_widget" in (space / "app.py").read_text()
    requirements = (space / "requirements.txt").read_text()
    assert "evaluate" in requirements and "hf-eval" in requirements


def test_space_requirements_install_a_wheel_never_the_dataset():
    """Installing the metric must not clone the dataset repository (146 GB with git-lfs)."""
    from importlib.metadata import metadata

    from packaging.requirements import Requirement
    from packaging.utils import parse_wheel_filename

    lines = [line.strip() for line in (REPO / "hf_eval/kernel_acceptance/requirements.txt")
             .read_text().splitlines() if line.strip() and not line.startswith("#")]
    requirements = {Requirement(line).name: Requirement(line) for line in lines}
    assert not [line for line in lines if "git+" in line or "/datasets/" in line]
    url = requirements["hf-eval"].url
    assert url and url.startswith("https://") and url.endswith(".whl")
    name, version, _, _ = parse_wheel_filename(url.rsplit("/", 1)[1])
    project = metadata("hf-eval")  # this checkout's pyproject.toml, as installed
    assert (name, str(version)) == (project["Name"], project["Version"])


SCRIPT = """\
import os
os.environ.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
import evaluate
metric = evaluate.load("hf_eval/kernel_acceptance")
result = metric.compute(predictions=["torch_toy"], references=[{uuid!r}], root={root!r})
print("RESULT", result["accepted"], result["total"], result["cases"][0]["status"])
"""


@pytest.mark.parametrize("how", ["script", "stdin"])
def test_metric_works_from_a_plain_script_and_from_stdin(toy_root, tmp_path, how):
    """The worker is a fresh interpreter: nothing re-imports the caller's ``__main__``, so
    a script without an ``if __name__ == "__main__"`` guard, or one read from stdin,
    gets the right verdict and no bootstrapping traceback."""
    import subprocess
    import sys

    code = SCRIPT.format(uuid=uuids(toy_root)[0], root=str(toy_root))
    script = tmp_path / "plain.py"
    script.write_text(code)
    argv = [sys.executable, str(script)] if how == "script" else [sys.executable, "-"]
    done = subprocess.run(argv, input=None if how == "script" else code, cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "RESULT 1 1 PASSED" in done.stdout
