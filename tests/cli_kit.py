"""Run the real command line in a subprocess, as a user would, on a dataset root.

``hf_eval(*args)`` runs ``python -m hf_eval ARGS`` with the test's private cache and a
fixed terminal width, and returns the completed process (``returncode``, ``stdout``,
``stderr``), so a test asserts on exactly what a user sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import python_path

REPO = Path(__file__).resolve().parent.parent

def hf_eval(*args: str | Path, columns: int = 200, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m hf_eval ARGS`` in a subprocess; ``columns`` is the terminal width."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": python_path(),
           "NO_COLOR": "1", "TERM": "dumb"}
    argv = [str(a) for a in args]
    return subprocess.run([sys.executable, "-m", "hf_eval", *argv], capture_output=True, text=True,
                          env=env, cwd=cwd or REPO, timeout=timeout)


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
