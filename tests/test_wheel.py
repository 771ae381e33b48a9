"""hf-eval as a wheel, installed outside the checkout, run against a separate dataset root.

The wheel is built from a copy of the sources (so the build writes nothing into the
checkout) and installed with pip into a fresh virtual environment in a temporary
directory; its dependencies (torch, datasets, ...) come from the project's ``.venv``
through a path file, because installing them again would take minutes and this test is
about the package, not its dependencies. The dataset root is a copy of this repository's
data files elsewhere: nothing may assume that the root is the package's parent. Checked
from there: the CLI (with ``--root`` and with the root found from the current
directory), an audit whose worker must not be able to read the dataset, and the
``evaluate`` metric loaded from the installed package with ``root=``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, write_json

DEFINITION = "noncausal_dense_attention_h32_d64"
OP_TYPE = "dense_attention"
SOLUTION = "torch_sdpa_dense_h32_d64"


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 600):
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A fresh venv holding the hf-eval wheel, and a dataset root outside the checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "hf_eval", source / "hf_eval",
                    ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "--quiet", "-w", str(dist), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("hf_eval-*.whl")

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin/python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    # The dataset lies inside a tree that is on sys.path (so a worker could read it by
    # default): only the audit's own protection of its root keeps it out.
    shared = tmp / "share"
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n"
                                                   + str(shared) + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--quiet", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    root = shared / "clone"
    for name in ("definitions", "tasks", "solutions", "workloads"):
        shutil.copytree(REPO / name, root / name)
    shutil.copy(REPO / "captures.jsonl", root / "captures.jsonl")
    shutil.copytree(REPO / f"blob/workloads/{DEFINITION}", root / f"blob/workloads/{DEFINITION}")
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(HF_EVAL_CACHE=str(tmp / "cache"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_EVALUATE_OFFLINE="1", HF_HOME=str(tmp / "hf-home"),
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    env.pop("HF_EVAL_ROOT", None)
    return {"wheel": wheel, "venv": venv, "python": python, "site": site, "root": root,
            "elsewhere": elsewhere, "env": env, "tmp": tmp}


def test_the_wheel_holds_the_harness_and_no_data(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for needed in ("hf_eval/cli.py", "hf_eval/data/hub.json", "hf_eval/samples/fresh.py",
                   "hf_eval/families/registry.py", "hf_eval/bench/goals.json",
                   f"hf_eval/families/{OP_TYPE}/__init__.py",
                   f"hf_eval/families/{OP_TYPE}/{DEFINITION}.roofline.json",
                   f"hf_eval/families/{OP_TYPE}/{DEFINITION}.shapes.json",
                   f"hf_eval/families/{OP_TYPE}/{DEFINITION}.cases.json",
                   "hf_eval/kernel_acceptance/kernel_acceptance.py",
                   "hf_eval/kernel_acceptance/requirements.txt"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("definitions/", "workloads/", "blob/",
                                                  "tasks/", "viewer/"))]
    where = run([installed["python"], "-c", "import hf_eval; print(hf_eval.__file__)"],
                installed["elsewhere"], installed["env"])
    assert Path(where.stdout.strip()).is_relative_to(installed["site"]), where


def test_cli_with_root_and_with_the_root_found_from_the_current_directory(installed):
    env, root = installed["env"], installed["root"]
    listed = run(["hf-eval", "--root", root, "list", "definitions", "--names"],
                 installed["elsewhere"], env)
    assert listed.returncode == 0, listed.stderr
    assert DEFINITION in listed.stdout.split()
    inside = run(["hf-eval", "list", "definitions", "--names"], root / "definitions", env)
    assert inside.returncode == 0 and inside.stdout == listed.stdout, inside.stderr
    nowhere = run(["hf-eval", "list", "definitions"], installed["elsewhere"], env)
    assert nowhere.returncode == 2
    assert "no dataset root found" in nowhere.stderr and "--root" in nowhere.stderr


def test_audit_runs_and_its_worker_cannot_read_the_dataset(installed):
    """The candidate returns a wrong answer if it can read the dataset root: PASSED proves
    both that the worker runs from the installed package and that the root is walled off
    (the root sits in a sys.path tree the worker may read, except for the audited root)."""
    env, root, tmp = installed["env"], installed["root"], installed["tmp"]
    solution = json.loads((REPO / f"solutions/{OP_TYPE}/{SOLUTION}.json").read_text())
    source = solution["sources"][0]["content"]
    leak = root / f"definitions/{OP_TYPE}/{DEFINITION}.json"
    candidate = tmp / "candidate" / "main.py"
    candidate.parent.mkdir()
    candidate.write_text(source + f"""

_run = run


def run(*args):
    out = _run(*args)
    try:
        open({str(leak)!r}).read()
    except OSError:
        return out
    return out * 2  # the dataset was readable: a wrong answer
""")
    report = tmp / "audit.jsonl"
    done = run(["hf-eval", "--root", root, "audit", "--definitions", DEFINITION,
                "--candidate", candidate, "--suite", "first", "--validation-only",
                "--report", report], installed["elsewhere"], env)
    records = [json.loads(line) for line in report.read_text().splitlines()]
    assert done.returncode == 0, (done.stderr[-3000:], records)
    assert [r["status"] for r in records] == ["PASSED"]
    assert any(w.startswith("landlock") for w in records[0]["isolation"]), records[0]


def test_the_metric_loads_from_the_installed_package(installed):
    env, root = installed["env"], installed["root"]
    uuid = json.loads((root / f"workloads/{OP_TYPE}/{DEFINITION}.jsonl").read_text()
                      .splitlines()[0])["workload"]["uuid"]
    script = f"""
from pathlib import Path
import evaluate
import hf_eval
metric = evaluate.load(str(Path(hf_eval.__file__).parent / "kernel_acceptance"))
result = metric.compute(predictions=[{SOLUTION!r}], references=[{uuid!r}], root={str(root)!r})
print("RESULT", result["accepted_fraction"], result["cases"][0]["status"])
"""
    done = run([installed["python"], "-c", script], installed["elsewhere"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "RESULT 1.0 PASSED"


def test_root_discovery_never_takes_site_packages_for_a_dataset(installed, tmp_path):
    """With the wheel, the package's parent is site-packages' parent: not a dataset, so the
    sandbox must not wall it off (the venv would become unreadable) and the CLI must not
    use it as a root."""
    script = """
from hf_eval.isolation import walls as sandbox
from hf_eval.data.repository import PACKAGE_CHECKOUT, is_dataset_root
print(sandbox._default_dataset_root(), is_dataset_root(PACKAGE_CHECKOUT))
"""
    done = run([installed["python"], "-c", script], installed["elsewhere"], installed["env"])
    assert done.stdout.split() == ["None", "False"], done.stderr
    write_json(tmp_path / "x.json", {})  # the fixture's temporary tree stays untouched
