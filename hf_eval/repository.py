"""The dataset on disk: every definition, workload, solution, task and receipt, indexed.

Loading never stops at the first bad file: each file that fails validation is recorded
in ``problems`` (one ``DataError`` each) and left out, so the checker can report every
problem at once and the audit can refuse exactly the definitions a problem touches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from hf_eval.dtypes import TORCH_DTYPES
from hf_eval.errors import DataError
from hf_eval.schema import (
    Definition,
    Receipt,
    SafetensorsInput,
    ScalarInput,
    Solution,
    TaskConfig,
    WorkloadTrace,
    load_json,
    parse_json_line,
)
from hf_eval.store import Resolver, TensorStore


@dataclass
class Located:
    """A loaded object and where it came from (``line`` for JSONL rows)."""

    value: object
    path: Path
    line: int | None = None


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
    name: str | None
    definition: str | None
    error: DataError


@dataclass
class Dataset:
    root: Path
    definitions: dict[str, Located] = field(default_factory=dict)
    workloads: dict[str, list[Located]] = field(default_factory=dict)
    solutions: dict[str, Located] = field(default_factory=dict)
    tasks: dict[str, Located] = field(default_factory=dict)
    receipts: dict[str, Located] = field(default_factory=dict)
    problems: list[DataError] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    store: TensorStore | None = None

    @classmethod
    def load(cls, root: str | Path, resolvers: list[Resolver] | None = None) -> Dataset:
        """Read every file under ``root``; bad files go to ``problems``."""
        root = Path(root)
        ds = cls(root)
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
            for located in ds._load_lines(Receipt, root / "captures.jsonl"):
                ds._add_unique(ds.receipts, located, "receipt", key=located.value.uuid)
        if resolvers is None:
            from hf_eval.hub import HubResolver
            from hf_eval.lfs import GitLfsResolver
            from hf_eval.samples.regenerate import SampleRegenerator

            # After the local file: an LFS pointer in a git clone, then the deterministic
            # regeneration of generated samples (local; declines anything else at once),
            # then the Hub at the pinned commit (network; its failures are errors).
            resolvers = [GitLfsResolver(), SampleRegenerator(ds), HubResolver.for_root(root)]
        ds.store = TensorStore(root, resolvers)
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

    def _load_lines(self, model, path: Path) -> list[Located]:
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
            rows.append(Located(row, path, number))
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

    def where(self, located: Located) -> str:
        return self._rel(located.path) + (f":{located.line}" if located.line else "")

    def materialise_inputs(self, definition: Definition, row: Located,
                           device: str | torch.device = "cpu",
                           shared: bool = False, mapped: bool = False,
                           provided: dict[str, torch.Tensor] | None = None) -> list[object]:
        """The workload's inputs in argument order, loaded, verified and shape-checked.

        ``shared`` loads CPU tensors into shared memory (for the audit's worker processes);
        ``mapped`` maps them read-only from their files instead (the checker: a multi-GB
        weight whose values no rule reads then costs no resident memory). ``provided``
        holds tensors the caller has already verified (the checker's in-memory
        regeneration); they are shape- and dtype-checked, not loaded. A row with a
        ``draw_inputs`` method (a fresh case) provides its own tensors the same way.
        """
        trace: WorkloadTrace = row.value
        where = self.where(row)
        draw = getattr(row, "draw_inputs", None)
        if provided is None and draw is not None:
            # A row that exists only in memory (a fresh case, ``samples/fresh.py``) draws
            # its own tensors; its other inputs (shared weights) load from the store.
            provided = draw(definition, device, shared)
        missing = [a for a in definition.var_axes if a not in trace.workload.axes]
        if missing:
            raise DataError(where, f"missing variable axes {missing}", field="workload.axes")
        inputs: list[object] = []
        for name, spec in definition.inputs.items():
            desc = trace.workload.inputs.get(name)
            if desc is None:
                raise DataError(where, "missing input", field=f"workload.inputs.{name}")
            if isinstance(desc, ScalarInput):
                if spec.shape is not None:
                    raise DataError(where, "a tensor input cannot be a scalar",
                                    field=f"workload.inputs.{name}")
                inputs.append(desc.value)
                continue
            if not isinstance(desc, SafetensorsInput):
                raise DataError(where, "random inputs are not allowed in this dataset",
                                field=f"workload.inputs.{name}")
            if definition.shape_of(spec, trace.workload.axes) is None:
                raise DataError(where, "a scalar input must be a scalar descriptor",
                                field=f"workload.inputs.{name}")
            if provided and name in provided:
                tensor = provided[name]
            else:
                tensor = self.store.load(desc, device, shared=shared, mapped=mapped)
            self._check_shape(definition, row, name, desc, tuple(tensor.shape))
            if tensor.dtype != TORCH_DTYPES[spec.dtype]:
                raise DataError(desc.path, f"tensor dtype {tensor.dtype} does not match "
                                f"the definition's {spec.dtype}", field=name)
            inputs.append(tensor)
        return inputs

    def _check_shape(self, definition: Definition, row: Located, name: str,
                     desc: SafetensorsInput, actual: tuple[int, ...]) -> None:
        """Blame a shape mismatch on what decided the expected size.

        A variable axis's size comes from the workload line, so a mismatch along it names
        that file, line and axis (the tensor is named as the evidence); a constant axis or
        a wrong number of dimensions is the tensor's fault, so the tensor file is named.
        """
        spec = definition.inputs[name]
        axes = row.value.workload.axes
        expected = definition.shape_of(spec, axes)
        if actual == expected:
            return
        if len(actual) == len(expected):
            for axis, want, got in zip(spec.shape, expected, actual):
                if want != got and axis in definition.var_axes:
                    raise DataError(self.where(row), f"is {want}, but input {name!r} "
                                    f"({desc.path}) has {got} along {axis} (shape "
                                    f"{actual}, declared {list(spec.shape)})",
                                    field=f"workload.axes.{axis}")
        raise DataError(desc.path, f"tensor shape {actual} does not match the definition's "
                        f"{expected}", field=name)
