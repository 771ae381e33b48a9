"""Turn a definition's reference and a solution's sources into callables.

A solution is written out as a package directory (one per content hash) and its entry
file is imported from there. Source paths must stay inside that directory: absolute
paths, ``..`` and paths through links are refused, so a solution cannot overwrite files
of the harness or of another solution; and two sources never land in one file, so the
code that runs is the code hashed and shown.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import stat
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hf_eval.data.cache import cache_dir
from hf_eval.data.errors import DataError
from hf_eval.data.schema import (
    MAX_PACKAGE_BYTES,
    MAX_PACKAGE_FILES,
    Definition,
    Solution,
    normalise_source_path,
    parse,
)


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def compile_reference(definition: Definition) -> Callable:
    """The reference's ``run`` from its embedded source, in a fresh module."""
    name = f"hf_eval_reference_{definition.name}_{source_hash(definition.reference)[:12]}"
    module = types.ModuleType(name)
    module.__file__ = f"<reference of {definition.name}>"
    sys.modules[name] = module
    exec(compile(definition.reference, module.__file__, "exec"), module.__dict__)  # noqa: S102
    return module.run


def _hashed_path(path: str) -> str:
    """``path`` normalised; as given when it cannot be (only a solution built without
    validation has such a path, and :func:`write_package` refuses it)."""
    try:
        return normalise_source_path(path)
    except ValueError:
        return path


def solution_hash(solution: Solution) -> str:
    """Content hash of everything that decides what a solution computes.

    Sources are hashed by their normalised paths
    (:func:`~hf_eval.data.schema.normalise_source_path`, which validation already
    applied), so two spellings of one file hash the same.
    """
    digest = hashlib.sha256()
    digest.update(solution.model_dump_json(include={"definition", "spec"}).encode())
    sources = sorted((_hashed_path(s.path), s.content) for s in solution.sources)
    for path, content in sources:
        digest.update(b"\0" + path.encode() + b"\0" + content.encode())
    return digest.hexdigest()


def write_package(solution: Solution, where: Path | None = None) -> Path:
    """Write the sources under a per-hash directory, refusing paths that escape it and
    two sources that would be one file (``main.py`` and ``./main.py``; on a
    case-insensitive file system ``Main.py`` and ``main.py``): the second would replace
    the first."""
    base = where or cache_dir() / "packages"
    package = base / f"{solution.name}-{solution_hash(solution)[:16]}"
    package.mkdir(parents=True, exist_ok=True)
    root = package.resolve()
    written: dict[Path, str] = {}  # resolved target: the source path written there
    for src in solution.sources:
        target = (package / src.path)
        resolved = target.resolve()
        if root not in resolved.parents:
            raise DataError(f"solution {solution.name}", "source path escapes the package",
                            field=f"sources[{src.path}]")
        same = written.get(resolved) or next(
            (path for done, path in written.items()
             if target.exists() and done.exists() and os.path.samefile(done, target)), None)
        if same is not None:
            raise DataError(f"solution {solution.name}", f"sources {same} and {src.path} "
                            "would be written to one file", field=f"sources[{src.path}]")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            raise DataError(f"solution {solution.name}", "source path is a link",
                            field=f"sources[{src.path}]")
        if not target.is_file() or target.read_text() != src.content:
            target.write_text(src.content)
        written[resolved] = src.path
    return package




@dataclass
class Entry:
    """A loaded solution: ``run(*inputs)`` and, when the module has one, ``prepare``."""

    run: Callable
    """The solution's entry symbol, called with the inputs as ``run(*inputs)``."""
    prepare: Callable | None
    """The module's ``prepare``, called once with the inputs and returning a no-argument
    launch that is timed as the ``prepared`` method; None when the module has none."""
    module: types.ModuleType
    """The imported entry module."""


def load_module_file(path: Path, module_name: str) -> types.ModuleType:
    """Import one Python file as a module; its directory is importable while it loads."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def load_entry(solution: Solution, where: str | Path | None = None) -> Entry:
    """Write a solution under ``where`` (default: the cache) and import it; raises
    whatever its import raises (a COMPILE_ERROR)."""
    package = write_package(solution, Path(where) if where else None)
    module = load_module_file(package / solution.entry_file,
                              f"hf_eval_solution_{solution_hash(solution)[:16]}")
    run = getattr(module, solution.entry_symbol, None)
    if not callable(run):
        raise AttributeError(f"{solution.entry_file} defines no callable "
                             f"{solution.entry_symbol!r}")
    prepare = getattr(module, "prepare", None)
    return Entry(run, prepare if callable(prepare) else None, module)


#: The deepest a candidate folder may nest its sources.
MAX_PACKAGE_DEPTH = 16
#: What a candidate's folder may be called (its name is the solution's): ASCII letters,
#: digits, ``_``, ``.``, ``-``, as the service's names (no look-alike, no markup).
FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,89}")


def _open_dir(path: Path) -> int:
    """A descriptor of the directory ``path`` (absolute, links resolved), opened from the
    root one component at a time without following a link: a component swapped for a
    link after ``path`` was resolved makes the open fail instead of leading elsewhere."""
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in path.parts[1:]:
            next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_file(dir_fd: int, name: str, where: Path, limit: int, owner: int) -> bytes:
    """The bytes of the regular file ``name`` in the open directory ``dir_fd`` (not a
    link, ``owner``'s), of at most ``limit`` bytes: its size is checked by the open file
    before it is read (a sparse file costs no disk)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        info = _owned(fd, where, owner)
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read for ever
            raise DataError(where, "candidate source is not a regular file")
        if info.st_size > limit:
            raise DataError(where, f"candidate sources are over the package's limit of "
                            f"{MAX_PACKAGE_BYTES >> 20} MiB or {MAX_PACKAGE_FILES} files")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise DataError(where, "candidate source grew while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)


#: The most folders a candidate's package may hold (each is opened and listed).
MAX_PACKAGE_FOLDERS = 1000


def _owned(fd: int, where: Path, owner: int | None) -> os.stat_result:
    """``fd``'s status, refused unless it belongs to ``owner`` (None: whoever owns it)
    and, for a folder, only its owner can write in it: a root audit must package the
    author's files only, never another user's left in a shared folder."""
    info = os.fstat(fd)
    if owner is not None and info.st_uid != owner:
        raise DataError(where, f"candidate source is owned by uid {info.st_uid}, not by the "
                        f"folder's owner (uid {owner}): package only your own files")
    if stat.S_ISDIR(info.st_mode) and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise DataError(where, "candidate folder is writable by others (group or world): "
                        "package from a folder only you can write")
    return info


def _package_files(package: Path, entry_name: str) -> list[tuple[tuple[str, ...], bytes]]:
    """(relative parts, bytes) of every ``*.py`` under ``package``, in path order, read
    through descriptors opened without following links and without blocking (nothing
    swapped meanwhile, a link or a FIFO, can redirect or hold the read); every folder and
    file must be the package owner's, and no folder writable by others. Hidden folders
    and ``__pycache__`` are left out; a linked folder or file is refused."""
    files, total, folders = [], 0, 0
    root = _open_dir(package)
    opened = [root]
    try:
        owner = _owned(root, package, None).st_uid
        pending = [((), root)]
        while pending:
            here, dir_fd = pending.pop()
            with os.scandir(dir_fd) as listing:
                entries = sorted((e.name, e.stat(follow_symlinks=False).st_mode)
                                 for e in listing)
            for name, mode in entries:
                where = package.joinpath(*here, name)
                if stat.S_ISDIR(mode):
                    if name.startswith(".") or name == "__pycache__":
                        continue
                    folders += 1
                    if len(here) + 1 > MAX_PACKAGE_DEPTH or folders > MAX_PACKAGE_FOLDERS:
                        raise DataError(where, "candidate folder nests deeper than "
                                        f"{MAX_PACKAGE_DEPTH} folders or holds more than "
                                        f"{MAX_PACKAGE_FOLDERS}")
                    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                                 | os.O_NONBLOCK, dir_fd=dir_fd)
                    opened.append(fd)
                    _owned(fd, where, owner)
                    pending.append(((*here, name), fd))
                    continue
                if not name.endswith(".py"):
                    continue
                if stat.S_ISLNK(mode):
                    raise DataError(where, "candidate source is a link (links are not "
                                    "followed: copy the file into the folder)")
                if len(files) >= MAX_PACKAGE_FILES:
                    raise DataError(where, f"candidate sources are over the package's limit "
                                    f"of {MAX_PACKAGE_BYTES >> 20} MiB or "
                                    f"{MAX_PACKAGE_FILES} files")
                data = _read_file(dir_fd, name, where, MAX_PACKAGE_BYTES - total, owner)
                total += len(data)
                files.append(((*here, name), data))
    except OSError as exc:
        raise DataError(package, f"candidate folder could not be read without following "
                        f"a link ({exc.strerror})") from None
    finally:
        for fd in opened:
            os.close(fd)
    if not any(parts == (entry_name,) for parts, _ in files):
        raise DataError(package / entry_name, "candidate entry file is a link or not a "
                        "regular file")
    return sorted(files)


def solution_from_directory(entry: Path, definition: str) -> Solution:
    """Package ``path/main.py`` and the Python files beside it as a solution (``--candidate``).

    The folder is read through descriptors opened without following links, so nothing
    outside it is read, however its contents change meanwhile; a link in it is refused.
    Left out: hidden folders (``.venv``, ``.git``) and ``__pycache__``. An empty file is
    packaged as one newline (the same module to Python; a source needs content). The
    solution is named ``candidate-<folder>``; the folder's name must be ASCII letters,
    digits, ``_``, ``.`` or ``-``.
    """
    entry = Path(entry)
    if not entry.is_file():
        raise DataError(entry, "candidate entry file not found")
    package = entry.parent.resolve()
    if not FOLDER_NAME.fullmatch(package.name):
        raise DataError(package, "candidate folder name must be ASCII letters, digits, '_', "
                        "'.' or '-' (at most 90; it names the solution in every record)")
    sources = []
    for parts, data in _package_files(package, entry.name):
        where = package.joinpath(*parts)
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(where, f"candidate source is not UTF-8 text (byte {exc.start})") \
                from None
        if "\x00" in content:
            raise DataError(where, f"candidate source holds a NUL byte (at character "
                            f"{content.index(chr(0))}): not source text")
        if not content:
            if parts == (entry.name,):
                raise DataError(where, "candidate entry file is empty (it must define run)")
            content = "\n"
        sources.append({"path": "/".join(parts), "content": content})
    data = {"name": f"candidate-{package.name}", "definition": definition, "author": "local",
            "description": f"local candidate from {entry}",
            "spec": {"language": "python", "target_hardware": ["local"],
                     "entry_point": f"{entry.name}::run", "dependencies": [],
                     "destination_passing_style": False},
            "sources": sources}
    return parse(Solution, data, entry)
