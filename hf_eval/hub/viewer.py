"""Viewer files: typed rows of every catalogue and workload config, written from the data.

The data files themselves keep FlashInfer Trace's format, which FlashInfer-Bench reads:
definitions map axis and input names to objects, tasks map hardware names to picks, and
workload lines carry ``solution``/``evaluation`` keys that are always null here. The Hub's
dataset viewer (and ``load_dataset``) shows such maps as JSON text, because their keys
differ from file to file. So ``python -m hf_eval card`` also writes ``viewer/``: the same
records as JSON Lines whose every object has one schema, declared from the harness's
pydantic models (never inferred), so every column is a typed struct or list:

- ``viewer/definitions.jsonl``: a definition per row; ``axes``, ``inputs`` and
  ``outputs`` as lists of ``{name, ...}`` structs;
- ``viewer/solutions.jsonl``: ``spec`` as a struct, ``sources`` as a list;
- ``viewer/tasks.jsonl``: tolerances, timing and baseline as structs; per-output
  tolerances and per-hardware picks as lists of structs named by output or hardware;
- ``viewer/workloads/<definition>/{dev,test}.jsonl``: a workload per row with its axes as
  integers and, per input, the descriptor next to the input's shape and dtype (read off
  the definition, so no tensor is opened), plus a provenance summary; ``dev`` is the
  task's dev workloads, ``test`` every workload (dev included).

Nothing here is an input of the harness: delete ``viewer/`` and ``card`` writes it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from datasets import List, Value

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition, SafetensorsInput, ScalarInput, Solution, TaskConfig
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.hub.rows import provenance_summary

VIEWER_DIR = "viewer"
#: Python scalar dtype of a scalar input's value column, by the definition's dtype name.
_VALUE_DTYPES = {"bool": "bool", "int64": "int64", "int32": "int64", "int16": "int64",
                 "int8": "int64"}


@dataclass(frozen=True)
class ViewerFile:
    """One generated file: where it goes, its rows, and the features they are typed by."""

    config: str
    """The dataset card config it belongs to: ``definitions``, ``solutions``, ``tasks``,
    ``captures``, or a definition's name for its workloads."""
    split: str
    """The config's split it holds: ``test``, or ``dev`` for a task's dev workloads."""
    path: str
    """Where it is written, relative to the dataset root (``viewer/...``; ``captures.jsonl``
    for the receipts, which are read as they are)."""
    rows: list[dict]
    """The records, one JSON object per line of the file."""
    features: dict
    """The ``datasets`` feature type of each column, by column name."""

    def text(self) -> str:
        return "".join(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n"
                       for row in self.rows)


# ------------------------------------------------------------------------- definitions
def _tensor_spec_features():
    return List({"name": Value("string"), "shape": List(Value("string")),
                 "dtype": Value("string"), "description": Value("string")})


def definition_features() -> dict:
    return {"name": Value("string"), "op_type": Value("string"),
            "description": Value("string"), "tags": List(Value("string")),
            "axes": List({"name": Value("string"), "type": Value("string"),
                          "value": Value("int64"), "description": Value("string")}),
            "inputs": _tensor_spec_features(), "outputs": _tensor_spec_features(),
            "constraints": List(Value("string")), "reference": Value("string")}


def definition_row(definition: Definition) -> dict:
    def specs(tensors: dict) -> list[dict]:
        return [{"name": name, "shape": spec.shape, "dtype": spec.dtype,
                 "description": spec.description} for name, spec in tensors.items()]

    return {"name": definition.name, "op_type": definition.op_type,
            "description": definition.description, "tags": list(definition.tags),
            "axes": [{"name": name, "type": axis.type, "value": getattr(axis, "value", None),
                      "description": axis.description}
                     for name, axis in definition.axes.items()],
            "inputs": specs(definition.inputs), "outputs": specs(definition.outputs),
            "constraints": list(definition.constraints), "reference": definition.reference}


# --------------------------------------------------------------------------- solutions
def solution_features() -> dict:
    return {"name": Value("string"), "definition": Value("string"),
            "author": Value("string"), "description": Value("string"),
            "spec": {"language": Value("string"), "target_hardware": List(Value("string")),
                     "entry_point": Value("string"), "dependencies": List(Value("string")),
                     "destination_passing_style": Value("bool"), "binding": Value("string")},
            "sources": List({"path": Value("string"), "content": Value("string")})}


def solution_row(solution: Solution) -> dict:
    return solution.model_dump(mode="json")


# ------------------------------------------------------------------------------- tasks
def _tolerance_features() -> dict:
    return {"atol": Value("float64"), "rtol": Value("float64"),
            "required_matched_ratio": Value("float64"), "comparison": Value("string")}


def task_features() -> dict:
    return {"definition": Value("string"), "workloads": List(Value("string")),
            "tolerance": _tolerance_features(),
            "output_tolerances": List({"output": Value("string"), **_tolerance_features()}),
            "dev": List(Value("string")),
            "timing": {"warmup": Value("int64"), "iters": Value("int64"),
                       "trials": Value("int64")},
            "baseline": {"solution": Value("string"), "timed": Value("string")},
            "engine_baseline": Value("string"),
            "preferred": List({"hardware": Value("string"), "solution": Value("string"),
                               "evidence": Value("string")}),
            "call_timeout_s": Value("float64"),
            "diagnostic_tolerance": _tolerance_features(),
            "timed_allowance": Value("bool")}


def task_row(task: TaskConfig) -> dict:
    data = task.model_dump(mode="json")
    data["output_tolerances"] = [{"output": name, **tol}
                                 for name, tol in data["output_tolerances"].items()]
    data["preferred"] = [{"hardware": hw, **pick} for hw, pick in data["preferred"].items()]
    return data


# --------------------------------------------------------------------------- workloads
def workload_features(definition: Definition) -> dict:
    """A workload row of ``definition``: axes as integers, inputs with shapes and dtypes."""
    inputs = {}
    for name, spec in definition.inputs.items():
        value = Value(_VALUE_DTYPES.get(spec.dtype, "float64"))
        inputs[name] = {"type": Value("string"), "path": Value("string"),
                        "tensor_key": Value("string"), "shape": List(Value("int64")),
                        "dtype": Value("string"), "value": value}
    return {"uuid": Value("string"), "definition": Value("string"),
            "axes": {axis: Value("int64") for axis in definition.var_axes},
            "inputs": inputs,
            "provenance": {"kind": Value("string"), "origin": Value("string"),
                           "seed": Value("int64"), "case": Value("string"),
                           "outside_domain": Value("string")}}


def workload_row(dataset: Dataset, definition: Definition, row) -> dict:
    trace = row.value
    inputs = {}
    for name, spec in definition.inputs.items():
        desc = trace.workload.inputs.get(name)
        if isinstance(desc, ScalarInput):
            inputs[name] = {"type": "scalar", "path": None, "tensor_key": None, "shape": None,
                            "dtype": spec.dtype, "value": desc.value}
        elif isinstance(desc, SafetensorsInput):
            shape = definition.shape_of(spec, trace.workload.axes)
            inputs[name] = {"type": "safetensors", "path": desc.path,
                            "tensor_key": desc.tensor_key,
                            "shape": list(shape) if shape is not None else None,
                            "dtype": spec.dtype, "value": None}
        else:
            raise DataError(dataset.where(row), "the viewer shows stored and scalar inputs "
                            "only", field=f"workload.inputs.{name}")
    receipt = dataset.receipts.get(trace.workload.uuid)
    return {"uuid": trace.workload.uuid, "definition": trace.definition,
            "axes": {axis: trace.workload.axes[axis] for axis in definition.var_axes},
            "inputs": inputs,
            "provenance": provenance_summary(receipt.value if receipt else None)}


# ------------------------------------------------------------------------------- files
def _blocking(dataset: Dataset) -> None:
    """Viewer files are written from a dataset that loads cleanly, or not at all."""
    if dataset.problems:
        raise dataset.problems[0]


def viewer_files(root: str | Path, dataset: Dataset | None = None) -> list[ViewerFile]:
    """Every viewer file of the dataset at ``root``, in config order."""
    dataset = dataset or open_dataset(root, resolvers=[])
    _blocking(dataset)
    files = [
        ViewerFile("definitions", "test", f"{VIEWER_DIR}/definitions.jsonl",
                   [definition_row(dataset.definitions[n].value)
                    for n in sorted(dataset.definitions)], definition_features()),
        ViewerFile("solutions", "test", f"{VIEWER_DIR}/solutions.jsonl",
                   [solution_row(dataset.solutions[n].value) for n in sorted(dataset.solutions)],
                   solution_features()),
        ViewerFile("tasks", "test", f"{VIEWER_DIR}/tasks.jsonl",
                   [task_row(dataset.tasks[n].value) for n in sorted(dataset.tasks)],
                   task_features()),
    ]
    for name in sorted(dataset.definitions, key=lambda n: (dataset.definitions[n].value.op_type,
                                                           n)):
        rows = dataset.workloads.get(name)
        if not rows:
            continue
        definition = dataset.definitions[name].value
        features = workload_features(definition)
        test = [workload_row(dataset, definition, r) for r in rows]
        dev_uuids = set(dataset.task(name).dev) if name in dataset.tasks else set()
        dev = [r for r in test if r["uuid"] in dev_uuids]
        for split, split_rows in (("dev", dev), ("test", test)):
            if split_rows:  # a definition without a task has no dev split
                files.append(ViewerFile(name, split,
                                        f"{VIEWER_DIR}/workloads/{name}/{split}.jsonl",
                                        split_rows, features))
    return files


def write(root: str | Path, files: Iterable[ViewerFile]) -> list[str]:
    """Write ``files`` under ``root`` (and remove stale ones); returns the paths changed."""
    root = Path(root)
    wanted = {f.path: f.text() for f in files}
    changed = []
    for path, text in wanted.items():
        target = root / path
        if not target.is_file() or target.read_text() != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            changed.append(path)
    for stale in sorted((root / VIEWER_DIR).rglob("*.jsonl")):
        rel = stale.relative_to(root).as_posix()
        if rel not in wanted:
            stale.unlink()
            changed.append(rel)
    return changed


def stale(root: str | Path, files: Iterable[ViewerFile]) -> list[str]:
    """The viewer files under ``root`` that differ from ``files`` (or should not exist)."""
    root = Path(root)
    wanted = {f.path: f.text() for f in files}
    out = [p for p, text in wanted.items()
           if not (root / p).is_file() or (root / p).read_text() != text]
    out += [p.relative_to(root).as_posix() for p in sorted((root / VIEWER_DIR).rglob("*.jsonl"))
            if p.relative_to(root).as_posix() not in wanted]
    return out
