"""The sample's recipes: each definition's cases and how one is drawn.

A cases file (``hf_eval/families/<op_type>/<name>.cases.json``, in the folder of the
definition's family) lists a definition's sample cases (label, seed, params, and a note naming the
edge case); the definition's op family (:mod:`hf_eval.families.registry`, by ``op_type``)
draws them. This module is what the sample builder, the regenerator of large tensors and
the fresh suite share: the validated recipes, one case's inputs checked against the
definition, the variable axes read off them, and the UUID of a case.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import torch
from pydantic import Field

from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition, Model, NonEmpty, load_json
from hf_eval.families import registry
from hf_eval.families.registry import family_of

#: The folder of the family folders that hold the cases files (``<op_type>/<name>.cases.json``).
FAMILIES_DIR = registry.FAMILIES_DIR

#: Namespace of sample workload UUIDs: uuid5(SAMPLE_NAMESPACE, "<definition>/<label>").
SAMPLE_NAMESPACE = uuid.UUID("6f1c2a8e-3b7d-5c41-9e0a-5d2f8b7c1e34")


class SampleCase(Model):
    """One recipe: the generator's ``params`` and ``seed``, and the edge case it stands for."""

    label: NonEmpty
    """The case's name, unique within its definition; the workload UUID derives from it."""
    seed: int
    """The seed of the family's generator."""
    params: dict[str, Any] = {}
    """The family generator's parameters (each family's module docstring lists them)."""
    note: str = ""
    """The edge case this workload stands for, and why it lies where it does."""
    outside_domain: NonEmpty | None = None
    """Why this case lies outside the published dataset's curated domain (the inputs the
    published captures hold: dense GEMM M >= 4096, no tie-ambiguous router row, model-like
    GDN states), or None for a case inside it. Such a case is kept as a stress test only:
    the label travels into its receipt (``provenance.outside_domain``) and its workload
    row, it is never a task's dev workload, and its verdicts never decide a preferred
    solution (:func:`hf_eval.bench.report.decides_preferred`)."""


class SampleCases(Model):
    """``<op_type>/<definition>.cases.json``: the sample cases of one definition, in order."""

    definition: NonEmpty
    """The name of the definition the cases are for; must match the file's name."""
    cases: list[SampleCase] = Field(min_length=1)
    """The sample cases (at least one), in order."""


def sample_uuid(definition: str, label: str) -> str:
    """The UUID of one sample case; stable, so rebuilding the sample is idempotent."""
    return str(uuid.uuid5(SAMPLE_NAMESPACE, f"{definition}/{label}"))


def cases_path(definition: str) -> Path:
    """The cases file of ``definition``, in its family's folder."""
    return registry.definition_file(definition, "cases", FAMILIES_DIR)


def cases_paths() -> dict[str, Path]:
    """Every definition's cases file, by definition name."""
    return registry.definition_files("cases", FAMILIES_DIR)


def load_cases(definition: str) -> SampleCases | None:
    """The validated cases of ``definition``, or None when it has no cases file."""
    path = cases_path(definition)
    if not path.is_file():
        return None
    spec = load_json(SampleCases, path)
    if spec.definition != definition:
        raise DataError(path, f"names definition {spec.definition!r}, the file is "
                        f"{definition}.cases.json", field="definition")
    return spec


def case_by_label(spec: SampleCases, label: str, where: str) -> SampleCase:
    """The case a receipt names; its absence is an error at ``where``."""
    case = next((c for c in spec.cases if c.label == label), None)
    if case is None:
        raise DataError(where, f"receipt case {label!r} is not in "
                        f"{cases_path(spec.definition).name}")
    return case


def generate_case(definition: Definition, case: SampleCase, only: set[str] | None = None,
                  values: dict[str, object] | None = None) -> dict[str, object]:
    """Run the family's generator for one case and check it returned every input as declared.

    A generator may return an input as a zero-argument callable (e.g. a multi-GB weight
    drawn on demand); only the inputs in ``only`` (default: all) are drawn. ``values`` is
    what the generator already returned for this case, when the caller has called it.
    """
    family = family_of(definition, "sample generator")
    if values is None:
        values = family.generate(definition, dict(case.params), int(case.seed))
    where = f"{family.module}.generate (case {case.label!r})"
    if set(values) != set(definition.inputs):
        raise DataError(where, f"returned inputs {sorted(values)}, the definition declares "
                        f"{sorted(definition.inputs)}")
    drawn = {}
    for name, spec in definition.inputs.items():
        if only is not None and name not in only:
            continue
        value = values[name]() if callable(values[name]) else values[name]
        if spec.shape is None:
            if isinstance(value, torch.Tensor):
                raise DataError(where, "scalar input returned as a tensor", field=name)
        elif not isinstance(value, torch.Tensor) or value.dtype != TORCH_DTYPES[spec.dtype]:
            raise DataError(where, f"must be a {spec.dtype} tensor", field=name)
        drawn[name] = value
    return drawn


def infer_axes(definition: Definition, values: dict[str, object], where: str) -> dict[str, int]:
    """Variable axis values read off the tensors; const axes and consistency are checked."""
    axes: dict[str, int] = {}
    const = definition.const_axes
    for name, spec in definition.inputs.items():
        if spec.shape is None:
            continue
        tensor = values[name]
        if tensor.dim() != len(spec.shape):
            raise DataError(where, f"rank {tensor.dim()} != {len(spec.shape)}", field=name)
        for axis, size in zip(spec.shape, tensor.shape):
            if axis in const and const[axis] != size:
                raise DataError(where, f"axis {axis} is constant {const[axis]}, got {size}",
                                field=name)
            if axes.setdefault(axis, size) != size:
                raise DataError(where, f"axis {axis} is {axes[axis]} elsewhere, {size} here",
                                field=name)
    var = {a: axes[a] for a in definition.var_axes if a in axes}
    missing = [a for a in definition.var_axes if a not in var]
    if missing:
        raise DataError(where, f"variable axes {missing} appear in no input shape")
    return var
