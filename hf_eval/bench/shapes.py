"""Benchmark shapes: realistic-scale axes per definition, and their inputs drawn on the device.

Why: the sample workloads are small (they must run on a laptop CPU), so their timings say
little about the shapes real inference uses. ``<definition>.shapes.json``, in the folder of
the definition's family (``hf_eval/families/<op_type>/``), lists axes (plus
the structure a family's inputs need: sequence lengths, image segments, experts used,
context lengths), validated here (:class:`ShapeFile`, then the definition's axes and
constraints, then the family's ``bench_structure``). :func:`generate` draws a shape's
inputs ON THE DEVICE with a fixed seed (torch's generator: these inputs are never
committed, so the cross-version stability the sample generators need does not matter).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, Field, NonNegativeInt, ValidationError

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition, Model, NonEmpty, parse
from hf_eval.families import registry
from hf_eval.families.registry import family_of

#: The folder of the family folders that hold the shape files (``<op_type>/<name>.shapes.json``).
FAMILIES_DIR = registry.FAMILIES_DIR
SEED = 20261129


class BenchShape(Model):
    """One shape: its label, every variable axis, and the family's structure fields."""

    label: NonEmpty
    """The shape's name, unique within its file (reports and benchmark lines use it)."""
    axes: dict[str, NonNegativeInt]
    """The size of every variable axis of the definition, exactly those, meeting its
    constraints."""
    structure: dict[str, Any] = {}
    """What the family's input generator needs beyond the axes (sequence lengths, segments,
    experts used, ...), validated by the family's ``bench_structure`` model; empty when the
    family needs none."""


class ShapeFile(Model):
    """``<op_type>/<definition>.shapes.json``."""

    definition: NonEmpty
    """The name of the definition the shapes are for; must match the file's name."""
    note: str = ""
    """Free text for a reader: what the shapes are and are not (the code does not read
    it)."""
    source: str = ""
    """Free text: where the shapes come from (the model and serving setting they mirror)."""
    shapes: list[BenchShape] = Field(min_length=1)
    """The benchmark shapes (at least one), with unique labels."""


def shape_path(name: str) -> Path:
    """The shape file of definition ``name``, in its family's folder."""
    return registry.definition_file(name, "shapes", FAMILIES_DIR)


def shape_paths() -> dict[str, Path]:
    """Every definition's shape file, by definition name."""
    return registry.definition_files("shapes", FAMILIES_DIR)


def _structure(definition: Definition, shape: BenchShape, where: str, field: str) -> BaseModel:
    """The shape's ``structure`` as its family's model (errors name the field)."""
    model = family_of(definition, "benchmark generator").bench_structure
    try:
        return model.model_validate(shape.structure)
    except ValidationError as exc:
        err = exc.errors()[0]
        inner = ".".join(str(p) for p in err["loc"])
        raise DataError(where, err["msg"], field=f"{field}.structure" + (
            f".{inner}" if inner else "")) from None


def load_shapes(definition: Definition, path: Path | None = None) -> list[BenchShape]:
    """The benchmark shapes of ``definition``, checked against its axes and constraints."""
    path = path or registry.definition_file(definition.name, "shapes", FAMILIES_DIR,
                                            definition.op_type)
    where = str(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise DataError(where, f"cannot read the benchmark shape file ({err})") from None
    spec = parse(ShapeFile, data, where)
    if spec.definition != definition.name:
        raise DataError(where, f"must name definition {definition.name!r}", field="definition")
    labels = set()
    for i, shape in enumerate(spec.shapes):
        field = f"shapes[{i}]"
        if shape.label in labels:
            raise DataError(where, "needs a unique string label", field=f"{field}.label")
        labels.add(shape.label)
        if set(shape.axes) != set(definition.var_axes):
            raise DataError(where, f"axes must be exactly the variable axes "
                            f"{sorted(definition.var_axes)}", field=f"{field}.axes")
        failed = definition.violated_constraints(shape.axes)
        if failed:
            raise DataError(where, f"constraint violated: {failed[0]}", field=f"{field}.axes")
        _structure(definition, shape, where, field)
    return spec.shapes


def generate(definition: Definition, shape: BenchShape, device: str = "cuda") -> list[object]:
    """The inputs of one benchmark shape in argument order, on ``device``."""
    family = family_of(definition, "benchmark generator")
    if family.bench_inputs is None:
        raise DataError(family.module, f"the {family.op_type} family draws no benchmark "
                        "inputs", field="bench_inputs")
    structure = _structure(definition, shape, definition.name, shape.label)
    gen = torch.Generator(device=device).manual_seed(SEED)
    values = family.bench_inputs(definition, shape.axes, structure, gen, device)
    inputs = [values[name] for name in definition.inputs]
    for name, value in zip(definition.inputs, inputs):
        expected = definition.shape_of(definition.inputs[name], shape.axes)
        if expected is not None and tuple(value.shape) != expected:
            raise DataError(definition.name, f"generated {name} has shape "
                            f"{tuple(value.shape)}, expected {expected}", field=name)
    return inputs


def structure_counts(definition: Definition, shape: BenchShape) -> dict[str, int]:
    """The roofline's derived counts for a shape, from the shape file alone.

    The families' benchmark inputs fix these counts exactly (every index valid, each
    chosen expert at least one row, full top-k), so a report can recompute a benchmark
    roofline without the device-generated inputs; tests check these against the counts of
    generated inputs.
    """
    family = family_of(definition, "benchmark generator")
    structure = _structure(definition, shape, definition.name, shape.label)
    return family.structure_counts(definition, shape.axes, structure)
