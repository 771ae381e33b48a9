"""Temporary git repositories with Git LFS, and a local ``file://`` LFS remote.

Git LFS is exercised only here, in throw-away repositories under a temporary directory
(never in the project repository itself). The real ``git-lfs`` client (Debian package)
pushes objects to a bare repository over ``file://`` and pulls them back, so the whole
LFS path runs offline. Git's global and system configuration are replaced by a file in
the temporary directory, so the developer's own git settings are neither used nor
changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

LFS_ATTRIBUTES = "blob/**/*.safetensors filter=lfs diff=lfs merge=lfs -text\n"


def isolated_git_env(tmp: Path) -> dict[str, str]:
    """Environment variables that keep git away from the user's configuration."""
    config = tmp / "gitconfig"
    config.touch()
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
            "GIT_COMMITTER_NAME": "tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
            "GIT_TERMINAL_PROMPT": "0"}


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run git; raise with its stderr on failure."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def publish_with_lfs(dataset_root: Path, work: Path) -> str:
    """Commit ``dataset_root`` with its blobs in LFS and push to a bare ``file://`` remote.

    Returns the remote URL. ``work/src`` is the publishing clone, ``work/remote.git`` the
    remote (its LFS objects under ``remote.git/lfs/objects``).
    """
    remote = work / "remote.git"
    src = work / "src"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=work)
    shutil.copytree(dataset_root, src, ignore=shutil.ignore_patterns("cache"))
    git("init", "-q", "-b", "main", cwd=src)
    git("lfs", "install", "--local", cwd=src)
    (src / ".gitattributes").write_text(LFS_ATTRIBUTES)
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", "dataset with LFS blobs", cwd=src)
    url = remote.resolve().as_uri()
    git("remote", "add", "origin", url, cwd=src)
    git("push", "-q", "origin", "main", cwd=src)
    return url


def clone_pointers(url: str, dest: Path) -> Path:
    """Clone without LFS content: every LFS-tracked file is a pointer."""
    git("clone", "-q", url, str(dest), cwd=dest.parent, env={"GIT_LFS_SKIP_SMUDGE": "1"})
    return dest


def lfs_object(repo: Path, oid: str) -> Path:
    """Where an LFS object lives in a (bare or non-bare) repository."""
    base = repo / "lfs" if repo.name.endswith(".git") else repo / ".git" / "lfs"
    return base / "objects" / oid[:2] / oid[2:4] / oid


def corrupt(path: Path) -> None:
    """Flip the last byte, writing a new file (LFS objects may be hard links)."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.unlink()
    path.write_bytes(bytes(data))


def local_objects(repo: Path) -> dict[str, int]:
    """``{oid: size}`` of the LFS objects a clone holds."""
    base = repo / ".git" / "lfs" / "objects"
    if not base.is_dir():
        return {}
    return {p.name: p.stat().st_size for p in base.rglob("*") if p.is_file()}
