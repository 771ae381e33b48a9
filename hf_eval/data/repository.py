"""The files of a dataset root: every definition, workload, solution, task and receipt, indexed.

:class:`DatasetFiles` is plain data: what the files say, and where. It holds no tensors
and no way to fetch them; :func:`hf_eval.dataset.open_dataset` pairs it with a tensor
store (:class:`hf_eval.dataset.Dataset`).

Loading never stops at the first bad file: each file that fails validation is recorded in
``problems`` (one ``DataError`` each) and left out, so the checker can report every
problem at once and the audit can refuse exactly the definitions a problem touches.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from hf_eval.data.errors import DataError
from hf_eval.data.schema import (
    Definition,
    Receipt,
    SafetensorsInput,
    Solution,
    TaskConfig,
    WorkloadTrace,
    load_json,
    parse_json_line,
)

#: The checkout this package sits in: the dataset root when run from a clone (``python -m
#: hf_eval``, an editable install); for an installed wheel it is site-packages' parent.
PACKAGE_CHECKOUT = Path(__file__).resolve().parents[2]
ROOT_VARIABLE = "HF_EVAL_ROOT"


def is_dataset_root(path: Path) -> bool:
    """A directory holding ``definitions/`` (what every command reads first)."""
    return (path / "definitions").is_dir()


def discover_root(cwd: Path | None = None) -> Path:
    """The dataset root when ``--root`` is not given, never assumed to be the package's parent.

    In order: ``$HF_EVAL_ROOT``; the checkout holding this package, if it is a dataset (a
    clone run with ``python -m hf_eval`` or installed editable); the current directory or
    the nearest parent that is a dataset root (a wheel installed elsewhere, run inside a
    clone). Without one, the error says how to name it.
    """
    if os.environ.get(ROOT_VARIABLE):
        return Path(os.environ[ROOT_VARIABLE])
    if is_dataset_root(PACKAGE_CHECKOUT):
        return PACKAGE_CHECKOUT
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if is_dataset_root(candidate):
            return candidate
    raise DataError("--root", f"no dataset root found: not given, {ROOT_VARIABLE} unset, and "
                    f"neither {here} nor a parent holds definitions/ (pass --root <clone>)")


@dataclass
class Located:
    """A loaded object and where it came from (``line`` for JSONL rows)."""

    value: object
    """The validated record: a ``Definition``, ``Solution``, ``TaskConfig``, ``WorkloadTrace``
    or ``Receipt``."""
    path: Path
    """The file it was read from (under the dataset root)."""
    line: int | None = None
    """Its 1-based line number in a JSONL file; None for a whole-file JSON record."""
    text: str | None = None
    """The line as read, for rows that are written back unchanged (receipts); None otherwise."""


def _claimed_names(path: Path, kind: str) -> tuple[str | None, str | None]:
    """The ``name`` and ``definition`` a file that failed validation declares, if readable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    name = data.get("name")
    definition = name if kind == "definition" else data.get("definition")
    return (name if isinstance(name, str) else None,
            definition if isinstance(definition, str) else None)


@dataclass
class Rejected:
    """A file left out because it failed validation, with the names it claims (if readable).

    The audit looks a solution or definition up by name; when the file holding that name
    was rejected, the lookup reports the file's own problem (the line ``check`` prints)
    instead of "unknown solution", and ``problems_for`` knows which definition it belongs to.
    """

    kind: str
    """What the file was to hold: ``definition`` or ``solution``."""
    name: str | None
    """The ``name`` the file declares; None when the file cannot be read as a JSON object or
    has no string ``name``."""
    definition: str | None
    """The definition the file belongs to: its own ``name`` for a definition file, its
    ``definition`` field for a solution; None when that cannot be read."""
    error: DataError
    """The file's validation problem, the same object that is recorded in ``problems``."""


@dataclass
class DatasetFiles:
    """Every file of a dataset root, validated and indexed; bad files go to ``problems``."""

    root: Path
    """The dataset root directory the files were read from."""
    definitions: dict[str, Located] = field(default_factory=dict)
    """The valid files of ``definitions/``, by definition name."""
    workloads: dict[str, list[Located]] = field(default_factory=dict)
    """The valid lines of ``workloads/**/*.jsonl``, grouped by definition name, in file and
    line order."""
    solutions: dict[str, Located] = field(default_factory=dict)
    """The valid files of ``solutions/``, by solution name."""
    tasks: dict[str, Located] = field(default_factory=dict)
    """The valid files of ``tasks/``, by the name of the definition each one configures."""
    receipts: dict[str, Located] = field(default_factory=dict)
    """The valid lines of ``captures.jsonl``, by workload UUID, each with its line text kept;
    empty when the root has no such file."""
    problems: list[DataError] = field(default_factory=list)
    """One error per file or line left out: failed validation, or a duplicate name or key."""
    rejected: list[Rejected] = field(default_factory=list)
    """The definition and solution files among ``problems``, with the names they claim, so
    a lookup by name can report the file's own problem."""

    @classmethod
    def read(cls, root: str | Path) -> DatasetFiles:
        """Read every file under ``root``; bad files go to ``problems``."""
        ds = cls(Path(root))
        root = ds.root
        for path in sorted((root / "definitions").rglob("*.json")):
            ds._add_unique(ds.definitions, ds._load(Definition, path, "definition"),
                           "definition")
        for path in sorted((root / "solutions").rglob("*.json")):
            ds._add_unique(ds.solutions, ds._load(Solution, path, "solution"), "solution")
        for path in sorted((root / "tasks").glob("*.json")):
            located = ds._load(TaskConfig, path)
            if located:
                ds._add_unique(ds.tasks, located, "task", key=located.value.definition)
        for path in sorted((root / "workloads").rglob("*.jsonl")):
            for located in ds._load_lines(WorkloadTrace, path):
                ds.workloads.setdefault(located.value.definition, []).append(located)
        if (root / "captures.jsonl").is_file():
            for located in ds._load_lines(Receipt, root / "captures.jsonl", keep_text=True):
                ds._add_unique(ds.receipts, located, "receipt", key=located.value.uuid)
        return ds

    # ----------------------------------------------------------------- loading helpers
    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _load(self, model, path: Path, kind: str | None = None) -> Located | None:
        try:
            return Located(load_json(model, path), path)
        except DataError as err:
            problem = DataError(self._rel(path), err.rule, line=err.line, field=err.field)
            self.problems.append(problem)
            if kind is not None:
                name, definition = _claimed_names(path, kind)
                self.rejected.append(Rejected(kind, name, definition, problem))
            return None

    def _load_lines(self, model, path: Path, keep_text: bool = False) -> list[Located]:
        rows: list[Located] = []
        lines = path.read_text().splitlines()
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                row = parse_json_line(model, text, self._rel(path), number)
            except DataError as err:
                self.problems.append(err)
                continue
            rows.append(Located(row, path, number, text if keep_text else None))
        return rows

    def _add_unique(self, index: dict, located: Located | None, kind: str,
                    key: str | None = None) -> None:
        if located is None:
            return
        key = key or located.value.name
        if key in index:
            first = index[key]
            where = self._rel(first.path) + (f":{first.line}" if first.line else "")
            self.problems.append(DataError(self._rel(located.path), f"duplicate {kind} {key!r} "
                                           f"(first in {where})", line=located.line))
            return
        index[key] = located

    # ----------------------------------------------------------------- lookups
    def _rejected(self, kind: str, name: str) -> DataError | None:
        return next((r.error for r in self.rejected if r.kind == kind and r.name == name), None)

    def problems_for(self, definitions: list[str] | None) -> list[DataError]:
        """The load problems that block auditing ``definitions`` (None: all of them).

        A problem blocks a definition when its file's path names the definition, or when
        the rejected file (a solution, say) declares it in its ``definition`` field.
        """
        if not definitions:
            return list(self.problems)
        claimed = {id(r.error): r for r in self.rejected}
        blocking = []
        for problem in self.problems:
            rejected = claimed.get(id(problem))
            if any(name in problem.file for name in definitions) or (
                    rejected is not None and rejected.definition in definitions):
                blocking.append(problem)
        return blocking

    def definition(self, name: str) -> Definition:
        if name not in self.definitions:
            raise self._rejected("definition", name) or DataError(
                "definitions/", f"unknown definition {name!r}")
        return self.definitions[name].value

    def task(self, name: str) -> TaskConfig:
        if name not in self.tasks:
            raise DataError(f"tasks/{name}.json", "no task config for this definition")
        return self.tasks[name].value

    def solution(self, name: str) -> Solution:
        if name not in self.solutions:
            raise self._rejected("solution", name) or DataError(
                "solutions/", f"unknown solution {name!r}")
        return self.solutions[name].value

    def solutions_for(self, definition: str) -> list[Solution]:
        return [s.value for s in self.solutions.values() if s.value.definition == definition]

    def engine_outputs(self, located: Located) -> dict[str, SafetensorsInput] | None:
        """A receipt's engine output by output name (None: it has none, as an imported
        workload); a ``DataError`` naming the line when it does not fit its definition."""
        receipt: Receipt = located.value
        return receipt.expected_by_output(self.definition(receipt.definition),
                                          self._rel(located.path), located.line)

    def where(self, located: Located) -> str:
        return self._rel(located.path) + (f":{located.line}" if located.line else "")
