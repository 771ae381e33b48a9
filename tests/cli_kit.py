"""Run the real command line in a subprocess, as a user would, on a dataset root.

``hf_eval(*args)`` runs ``python -m hf_eval ARGS`` with the test's private cache and a
fixed terminal width, and returns the completed process (``returncode``, ``stdout``,
``stderr``), so a test asserts on exactly what a user sees.

The audit's contract: ``Audit.run()`` returns the case records and prints nothing; the CLI
renders them and chooses the exit code. Until the runner on this branch has that contract
(its ``run`` still returns an exit code and prints its own table), ``audit`` runs through
``ADAPT``, which gives ``run`` the new contract for the test. Once ``run`` is annotated to
return records, ``ADAPT`` is never used and can be deleted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hf_eval.runner import Audit

REPO = Path(__file__).resolve().parent.parent

#: Gives the old ``Audit.run`` (prints, returns an int) the new contract (returns records).
ADAPT = """\
import contextlib, io, sys
from hf_eval import runner
from hf_eval.cli import main
old = runner.Audit.run
def run(self):
    with contextlib.redirect_stdout(io.StringIO()):
        old(self)
    return self.records
runner.Audit.run = run
sys.exit(main(sys.argv[1:], prog="python -m hf_eval"))
"""


def adapt_in_process(monkeypatch) -> None:
    """``ADAPT`` for a test that calls ``hf_eval.cli.main`` in its own process."""
    if runner_returns_records():
        return
    import contextlib
    import io

    old = Audit.run

    def run(self):
        with contextlib.redirect_stdout(io.StringIO()):
            old(self)
        return self.records

    monkeypatch.setattr(Audit, "run", run)


def runner_returns_records() -> bool:
    """Whether ``Audit.run`` already returns the records (the contract the CLI codes to)."""
    return Audit.run.__annotations__.get("return") not in ("int", int)


def hf_eval(*args: str | Path, columns: int = 200, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m hf_eval ARGS`` in a subprocess; ``columns`` is the terminal width."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(REPO),
           "NO_COLOR": "1", "TERM": "dumb"}
    argv = [str(a) for a in args]
    command = "audit" in argv and not runner_returns_records()
    launcher = ["-c", ADAPT] if command else ["-m", "hf_eval"]
    return subprocess.run([sys.executable, *launcher, *argv], capture_output=True, text=True,
                          env=env, cwd=cwd or REPO, timeout=timeout)


def no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
