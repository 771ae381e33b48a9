"""Resolve Git LFS pointers inside a git clone with the real ``git lfs`` client.

A clone made without LFS content (``GIT_LFS_SKIP_SMUDGE=1``, or a machine whose git has
no LFS filter) holds small pointer files in place of the tensors. This resolver asks
``git lfs pull --include <path>`` for exactly the one file the store needs, so touching
one workload downloads that workload's tensors and nothing else. ``git lfs`` checks the
object's sha256 while downloading; the store checks the file again before use.

Only the Debian/upstream ``git-lfs`` binary is used (never the unmaintained PyPI package
of that name). Without it, or outside a git work tree, the resolver declines and the next
resolver in the chain is asked.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hf_eval.data.errors import DataError
from hf_eval.data.store import Expected, TensorStore, parse_lfs_pointer

#: ``--include`` takes comma-separated gitignore-style patterns: a path holding one of
#: these would select other files (or none), so such paths are refused, not guessed at.
_PATTERN_CHARS = set(",*?[]!\\")
#: The LFS filter as ``git lfs install`` writes it, passed per command so a clone whose
#: user never ran ``git lfs install`` still checks files out correctly.
_FILTER_CONFIG = (
    "filter.lfs.clean=git-lfs clean -- %f",
    "filter.lfs.smudge=git-lfs smudge -- %f",
    "filter.lfs.process=git-lfs filter-process",
    "filter.lfs.required=true",
)


def git_lfs_available() -> bool:
    """True when both ``git`` and the ``git-lfs`` client are on PATH."""
    return shutil.which("git") is not None and shutil.which("git-lfs") is not None


def work_tree_of(path: Path) -> Path | None:
    """The top of the git work tree holding ``path``, or None when it is in none."""
    probe = path if path.is_dir() else path.parent
    while not probe.exists():
        probe = probe.parent
    try:
        out = subprocess.run(["git", "-C", str(probe), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def _first_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if "error" in line.lower() or "fail" in line.lower()
              or "invalid" in line.lower() or "not exist" in line.lower()]
    return (useful or lines or ["no output"])[0]


class GitLfsResolver:
    """Materialises one LFS pointer of a git clone with ``git lfs pull --include``."""

    name = "git-lfs"

    def fetch(self, store: TensorStore, relpath: str, expected: Expected | None) -> bool:
        """Pull the object behind the pointer at ``relpath``; False when this is no LFS case."""
        path = store.root / relpath
        if not path.is_file():
            return False  # a missing file is not LFS's: git never checked it out
        with open(path, "rb") as fh:
            pointer = parse_lfs_pointer(fh.read(1025))
        if pointer is None or not git_lfs_available():
            return False
        top = work_tree_of(path)
        if top is None:
            return False
        inside = path.resolve().relative_to(top.resolve()).as_posix()
        if _PATTERN_CHARS & set(inside):
            raise DataError(relpath, "git-lfs: the path contains a pattern character "
                            f"({''.join(sorted(_PATTERN_CHARS & set(inside)))}) that "
                            "'git lfs pull --include' would misread")
        command = ["git"]
        for setting in _FILTER_CONFIG:
            command += ["-c", setting]
        command += ["lfs", "pull", "--include", inside, "--exclude", ""]
        done = subprocess.run(command, cwd=top, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise DataError(relpath, f"git-lfs: 'git lfs pull' failed for object "
                            f"{pointer.sha256} ({_first_error_line(done.stderr + done.stdout)})")
        with open(path, "rb") as fh:
            still_pointer = parse_lfs_pointer(fh.read(1025)) is not None
        if still_pointer:
            raise DataError(relpath, f"git-lfs: 'git lfs pull' succeeded but left the pointer "
                            f"in place (no LFS object {pointer.sha256} on the remote, or the "
                            "path is not tracked by LFS in .gitattributes)")
        return True
