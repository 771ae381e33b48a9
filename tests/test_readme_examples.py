"""The "Browse, load, materialise, evaluate" examples run as written, offline.

That section is in the README (the short version) and in ``docs/manual.md`` (the full
one); each file's section is checked on its own. A section's ``python`` blocks are run in
order in one fresh interpreter (later blocks use earlier names, as a reader pasting them
would), and its ``bash`` blocks with the project's venv first on PATH (``card`` in its
``--check`` mode, so the test never rewrites the README), all from the repository root
with the network off for the Hub client, ``datasets`` and ``evaluate``, and with private
caches.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

SECTION = "## Browse, load, materialise, evaluate"
FILES = ("README.md", "docs/manual.md")


def blocks(name: str, language: str) -> list[str]:
    text = (REPO / name).read_text()
    assert SECTION in text, f"{name} has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def environment(tmp_path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf-home"), HF_EVAL_CACHE=str(tmp_path / "eval-cache"),
               PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{env.get('PATH', '')}")
    return env


@pytest.mark.parametrize("name", FILES)
def test_python_examples_run(tmp_path, name):
    code = "\n".join(blocks(name, "python"))
    assert "load_dataset" in code and "with_tensors" in code and "evaluate.load" in code
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last == "1.0 PASSED", done.stdout  # the preferred solution passes its dev suite


@pytest.mark.parametrize("name", FILES)
def test_bash_examples_run(tmp_path, name):
    commands = blocks(name, "bash")
    assert commands
    for command in commands:
        check = command.replace("python -m hf_eval card ", "python -m hf_eval card --check ")
        done = subprocess.run(["bash", "-c", check], cwd=REPO, env=environment(tmp_path),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
