"""Content-addressed tensor store: one tensor per safetensors file named by its sha256.

Reading resolves a workload's input descriptor against the dataset root, makes sure the
file is really there (asking each :class:`Resolver` in turn when it is missing or is only
a Git LFS pointer), verifies its sha256 before use, and loads the tensor straight onto
the requested device. Writing content-addresses and deduplicates.

Resolvers are the seam for remote storage: a resolver materialises one relative path
under the root, and the store verifies whatever it wrote. Callers never see which
resolver did the work.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch
from safetensors import SafetensorError, safe_open

from hf_eval.data import tensorfile
from hf_eval.data.cache import cache_dir
from hf_eval.data.errors import DataError
from hf_eval.data.schema import SafetensorsInput

LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_HASH_CHUNK = 16 << 20


@dataclass(frozen=True)
class Expected:
    """What a file must hash to (and, when a pointer says so, its size)."""

    sha256: str
    """The file's sha256, as 64 lowercase hex digits."""
    size: int | None = None
    """The file's size in bytes, from a Git LFS pointer; None when only the hash is known
    (a content-addressed file name)."""


class Resolver(Protocol):
    """Something that can put the real bytes of ``relpath`` at ``store.root / relpath``."""

    name: str
    """A short name for the resolver (``hub``), shown in errors that list those tried."""

    def fetch(self, store: TensorStore, relpath: str, expected: Expected | None) -> bool:
        """Materialise the file; return False when this resolver does not know it."""


def parse_lfs_pointer(data: bytes) -> Expected | None:
    """The oid and size of a Git LFS pointer file, or None when ``data`` is not one."""
    if not data.startswith(LFS_POINTER_PREFIX) or len(data) > 1024:
        return None
    fields = dict(line.split(" ", 1) for line in data.decode().splitlines() if " " in line)
    oid = fields.get("oid", "").removeprefix("sha256:")
    if not _SHA256.fullmatch(oid) or not fields.get("size", "").isdigit():
        return None
    return Expected(oid, int(fields["size"]))


def _head(path: Path) -> bytes:
    """The first bytes of a file, enough to tell an LFS pointer (never the whole file)."""
    with open(path, "rb") as fh:
        return fh.read(1025)


def local_state(path: Path) -> str:
    """"present" (real bytes on disk), "pointer" (a Git LFS pointer) or "missing".

    What a reader that must not fetch (the checker) needs to know about a tensor file.
    """
    if not path.is_file():
        return "missing"
    return "pointer" if parse_lfs_pointer(_head(path)) else "present"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class VerifiedFiles:
    """Remembers files already hashed, keyed by path and the file's identity.

    A second load of a multi-GB tensor then costs a ``stat`` instead of a full rehash.
    The identity is the size, the inode and both the modification and the status-change
    times: any write to the file changes its ctime, which no tool can set back, so a
    changed byte is always re-hashed, even with its size and mtime restored. ``rehash``
    trusts only the hashes taken by this object (``check --rehash``: every file hashed
    once in the run).
    """

    def __init__(self, path: Path | None = None, rehash: bool = False) -> None:
        self.path = path or cache_dir() / "verified.json"
        self.rehash = rehash
        self._hashed_here: set[str] = set()
        self._lock = threading.Lock()
        try:
            self.entries: dict[str, list] = json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            self.entries = {}

    @staticmethod
    def identity(st: os.stat_result) -> list[int]:
        """What must be unchanged for a remembered hash to stand."""
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]

    def sha256(self, file: Path) -> str:
        st = file.stat()
        key = str(file.resolve())
        entry = self.entries.get(key)
        identity = self.identity(st)
        trusted = not self.rehash or key in self._hashed_here
        if trusted and entry and entry[:-1] == identity:
            return entry[-1]
        digest = sha256_file(file)
        # Audit lanes are threads of one process: one writer at a time, and a temporary
        # name per thread as well as per process (other processes share the cache).
        with self._lock:
            self.entries[key] = [*identity, digest]
            self._hashed_here.add(key)
            tmp = self.path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(self.entries))
            tmp.replace(self.path)
        return digest


def expected_from_name(relpath: str) -> Expected | None:
    """Content-addressed files carry their sha256 as the file name."""
    stem = Path(relpath).name.removesuffix(".safetensors")
    return Expected(stem) if _SHA256.fullmatch(stem) else None


class TensorStore:
    """Reads and writes the tensors of one dataset root."""

    def __init__(self, root: str | Path, resolvers: list[Resolver] | None = None,
                 verified: VerifiedFiles | None = None) -> None:
        self.root = Path(root)
        self.resolvers: list[Resolver] = list(resolvers or [])
        self.verified = verified or VerifiedFiles()

    # ------------------------------------------------------------------ reading
    def materialise(self, relpath: str) -> Path:
        """Return the local path of ``relpath`` with verified content, fetching it if needed."""
        path = self.root / relpath
        expected = expected_from_name(relpath)
        if path.is_file():
            with open(path, "rb") as fh:
                head = fh.read(1025)
            pointer = parse_lfs_pointer(head)
            if pointer is None:
                self._verify(path, relpath, expected)
                return path
            if expected and pointer.sha256 != expected.sha256:
                raise DataError(relpath, f"LFS pointer oid {pointer.sha256} does not match the "
                                "content-addressed file name")
            expected = pointer
        for resolver in self.resolvers:
            if resolver.fetch(self, relpath, expected):
                if not path.is_file() or parse_lfs_pointer(_head(path)):
                    raise DataError(relpath, f"resolver {resolver.name!r} reported success "
                                    "but left no file")
                self._verify(path, relpath, expected)
                return path
        tried = ", ".join(r.name for r in self.resolvers) or "none"
        state = "is a Git LFS pointer with no content" if path.exists() else "is missing"
        raise DataError(relpath, f"tensor file {state} (resolvers tried: {tried})")

    def _verify(self, path: Path, relpath: str, expected: Expected | None) -> None:
        if expected is None:
            return
        if expected.size is not None and path.stat().st_size != expected.size:
            raise DataError(relpath, f"size {path.stat().st_size} does not match the "
                            f"recorded {expected.size}")
        actual = self.verified.sha256(path)
        if actual != expected.sha256:
            raise DataError(relpath, f"sha256 mismatch: file hashes to {actual}, "
                            f"expected {expected.sha256}")

    def load(self, desc: SafetensorsInput, device: str | torch.device = "cpu",
             shared: bool = False, mapped: bool = False) -> torch.Tensor:
        """Load the tensor a descriptor names, verified, directly onto ``device``.

        ``shared`` puts a CPU tensor in shared memory without an intermediate copy, so a
        worker process can use it and the caller can still see (and byte-check) it.
        ``mapped`` maps a CPU tensor from its file (read on touch; see ``tensorfile.read``).
        """
        path = self.materialise(desc.path)
        device = torch.device(device)
        try:
            if device.type == "cpu":
                return tensorfile.read(path, desc.tensor_key, shared=shared, mapped=mapped)
            with safe_open(path, framework="pt", device=str(device)) as fh:
                if desc.tensor_key not in fh.keys():
                    raise KeyError(desc.tensor_key)
                return fh.get_tensor(desc.tensor_key)
        except KeyError:
            raise DataError(desc.path, f"has no tensor {desc.tensor_key!r} (keys: "
                            f"{sorted(tensorfile.keys(path))})", field="tensor_key") from None
        except (SafetensorError, tensorfile.TensorFileError) as exc:
            raise DataError(desc.path, f"not a readable safetensors file ({exc})") from None

    # ------------------------------------------------------------------ writing
    def write(self, tensor: torch.Tensor, directory: str, key: str) -> SafetensorsInput:
        """Store ``tensor`` under ``directory`` as ``<sha256>.safetensors`` (deduplicated)."""
        target_dir = self.root / directory
        target_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target_dir, suffix=".tmp")
        os.close(fd)
        tmp = Path(tmp_name)
        # mkstemp creates the file 0600; a dataset file gets the mode any new file would.
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)
        try:
            tensorfile.write(tmp, key, tensor)
            digest = sha256_file(tmp)
            final = target_dir / f"{digest}.safetensors"
            if final.is_file() and parse_lfs_pointer(_head(final)) is None:
                tmp.unlink()
            else:
                tmp.replace(final)
        finally:
            tmp.unlink(missing_ok=True)
        relpath = (Path(directory) / f"{digest}.safetensors").as_posix()
        return SafetensorsInput(type="safetensors", path=relpath, tensor_key=key)
