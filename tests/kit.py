"""Loaders the family tests share, built on the harness's own APIs.

The reference and rules tests need the same things: a definition, its reference as a
callable, a solution's entry point, the sample cases and one case's generated inputs, a
task. Going through the harness (``Dataset``, ``compile_reference``, ``load_entry``,
``generate_case``) means the tests exercise the code paths the audit uses, not a private
re-implementation of them. The ``*_json`` loaders return the file as written (a fresh
dict on every call, safe to modify) for tests that check the published JSON itself.

Everything derived from the files is cached for the session, as the per-file helpers it
replaces were; the cached values are shared, so a test that modifies one must copy it
first (``fresh_case_inputs`` gives an uncached copy of a case's inputs).
"""

from __future__ import annotations

import copy
import functools
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hf_eval.modules import compile_reference, load_entry
from hf_eval.repository import Dataset
from hf_eval.samples.build import cases_path, generate_case
from hf_eval.schema import Definition, Solution, TaskConfig, load_json

REPO = Path(__file__).resolve().parent.parent


@functools.cache
def dataset() -> Dataset:
    """The repository's dataset, indexed once (no tensor resolvers: nothing is fetched)."""
    return Dataset.load(REPO, resolvers=[])


# ----------------------------------------------------------------- definitions, references
def _path(kind: str, name: str) -> Path:
    """Where ``Dataset`` found the file; it leaves out files that fail validation, so a
    missing name is reported with the problems that mention it."""
    index = getattr(dataset(), kind)
    if name in index:
        return index[name].path
    problems = [str(p) for p in dataset().problems if name in str(p)]
    raise LookupError(f"no valid {kind} file for {name!r}" + (f": {problems}" if problems else ""))


def definition_path(name: str) -> Path:
    return _path("definitions", name)


@functools.cache
def definition(name: str) -> Definition:
    """The definition, validated by the harness schema."""
    return load_json(Definition, definition_path(name))


def definition_json(name: str) -> dict[str, Any]:
    """The definition file as written (a fresh dict)."""
    return json.loads(definition_path(name).read_text())


@functools.cache
def reference(name: str) -> Callable:
    """The definition's reference ``run``, compiled as the harness compiles it."""
    return compile_reference(definition(name))


def reference_namespace(name: str) -> dict[str, Any]:
    """Every top-level name of the reference source (for its helper functions).

    Read from the module ``compile_reference`` registered (``run`` may be decorated, so its
    own ``__globals__`` can belong to another module)."""
    return vars(sys.modules[reference(name).__module__])


# ----------------------------------------------------------------- solutions
def solution_path(name: str) -> Path:
    return _path("solutions", name)


@functools.cache
def solution(name: str) -> Solution:
    return load_json(Solution, solution_path(name))


def solution_json(name: str) -> dict[str, Any]:
    """The solution file as written (a fresh dict)."""
    return json.loads(solution_path(name).read_text())


def solutions_for(definition_name: str) -> list[Solution]:
    """Every solution of a definition, in file order."""
    return sorted(dataset().solutions_for(definition_name),
                  key=lambda s: solution_path(s.name).as_posix())


def declares(solution: dict[str, Any], device: str) -> bool:
    """Whether a solution file declares hardware of this kind ("cpu", or a GPU for "cuda")."""
    targets = [t.lower() for t in solution["spec"]["target_hardware"]]
    return ("cpu" in targets) if device == "cpu" else any(t != "cpu" for t in targets)


def solutions_json_for(definition_name: str) -> list[dict[str, Any]]:
    """Every solution file of a definition as written (fresh dicts), in file order."""
    return [solution_json(s.name) for s in solutions_for(definition_name)]


def fresh_solution_module(name: str) -> types.ModuleType:
    """A newly imported copy of the solution's entry module (``load_entry``), for a test
    that changes its globals."""
    return load_entry(solution(name)).module


@functools.cache
def solution_module(name: str) -> types.ModuleType:
    """The solution's entry module, written and imported as the harness does; shared."""
    return fresh_solution_module(name)


def solution_namespace(name: str) -> dict[str, Any]:
    """Every top-level name of the solution's entry module."""
    return vars(solution_module(name))


def solution_run(name: str) -> Callable:
    """The solution's entry point (``run``)."""
    return getattr(solution_module(name), solution(name).entry_symbol)


# ----------------------------------------------------------------- tasks
def task_path(name: str) -> Path:
    return _path("tasks", name)


@functools.cache
def task(name: str) -> TaskConfig:
    return load_json(TaskConfig, task_path(name))


def task_json(name: str) -> dict[str, Any]:
    """The task file as written (a fresh dict)."""
    return json.loads(task_path(name).read_text())


# ----------------------------------------------------------------- sample cases
def cases_json(name: str) -> dict[str, Any]:
    """The sample-cases file (generator and cases) as written (a fresh dict)."""
    return json.loads(cases_path(name).read_text())


@functools.cache
def _cases(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(cases_json(name)["cases"])


def cases(name: str) -> list[dict[str, Any]]:
    """The definition's sample cases (label, seed, params), in file order (a copy)."""
    return copy.deepcopy(list(_cases(name)))


def labels(name: str) -> list[str]:
    return [c["label"] for c in _cases(name)]


def case(name: str, label: str) -> dict[str, Any]:
    """One sample case by label."""
    for entry in _cases(name):
        if entry["label"] == label:
            return entry
    raise LookupError(f"{cases_path(name)} has no case {label!r}")


def fresh_case_inputs(name: str, label: str) -> dict[str, Any]:
    """A case's inputs (name -> tensor or scalar, in the definition's order), generated now."""
    return generate_case(definition(name), cases_json(name)["generator"], case(name, label))


@functools.cache
def case_inputs(name: str, label: str) -> dict[str, Any]:
    """A case's inputs, generated once per session and shared: copy before modifying."""
    return fresh_case_inputs(name, label)


@functools.cache
def case_reference(name: str, label: str) -> Any:
    """The reference's output on a case's shared inputs, computed once per session."""
    return reference(name)(*args(name, case_inputs(name, label)))


def args(name: str, inputs: dict[str, Any]) -> list[Any]:
    """``inputs`` as positional arguments, in the definition's input order."""
    return [inputs[key] for key in definition(name).inputs]


# ----------------------------------------------------------------- dev (held-out) split
#: At most this many dev workloads per definition (issue 15): dev is for iterating, the
#: rest of ``test`` is held out.
DEV_MAX = 5


def assert_dev_held_out(name: str, dev: list[str]) -> None:
    """A task's ``dev`` is 1..DEV_MAX sample UUIDs in case order, a strict subset of them."""
    from hf_eval.samples.common import sample_uuid

    every = [sample_uuid(name, c["label"]) for c in cases(name)]
    assert 1 <= len(dev) <= DEV_MAX, f"{name}: {len(dev)} dev workloads"
    assert len(set(dev)) == len(dev), f"{name}: a dev UUID is repeated"
    assert dev == [u for u in every if u in set(dev)], f"{name}: dev is not sample UUIDs " \
        "in case order"
    assert len(dev) < len(every), f"{name}: nothing is held out of dev"
