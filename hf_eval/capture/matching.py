"""Which definition a captured call belongs to: shapes, dtypes, constraints and constants.

A definition is a capture target when its tags say which hooked ops compute it and which
constants those calls must have, in FlashInfer Trace's free-form tag list::

    "capture:op=sdpa", "capture:op=flex_attention",
    "capture:scale=D**-0.5", "capture:mask='key_padding'"

A value is a Python expression over the definition's axes (and ``math``), evaluated like
a constraint. A definition must declare *every* constant the op's adapter reports (so a
causal call can never land in a non-causal definition because nobody thought to say so),
and the call must have every input and output the definition names, with its dtypes,
ranks, constant axes and constraints. Definitions without ``capture:op`` tags are never
targets (the published definitions are matched only once their owners add such tags).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import torch

from hf_eval.capture.adapters import Adapted
from hf_eval.data.dtypes import DTYPE_NAMES
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.dataset import Dataset

TAG_PREFIX = "capture:"


@dataclass(frozen=True)
class Target:
    """A definition that captured calls may become workloads of."""

    definition: Definition
    """The definition, as the dataset holds it."""
    ops: frozenset[str]
    """The names of the hooked ops whose calls may match it (its ``capture:op=`` tags);
    never empty."""
    constants: dict[str, str]
    """The constants a matching call must have, by name (its ``capture:<name>=<value>``
    tags): each a Python expression over the definition's axes and ``math``."""


def parse_target(definition: Definition, where: str) -> Target | None:
    """The definition's capture declaration, or None when it has no ``capture:op`` tag."""
    ops: set[str] = set()
    constants: dict[str, str] = {}
    for tag in definition.tags:
        if not tag.startswith(TAG_PREFIX):
            continue
        key, sep, value = tag[len(TAG_PREFIX):].partition("=")
        if not sep or not key or not value:
            raise DataError(where, f"tag {tag!r} must read 'capture:<name>=<value>'",
                            field="tags")
        if key == "op":
            ops.add(value)
            continue
        try:
            ast.parse(value, mode="eval")
        except SyntaxError:
            raise DataError(where, f"tag {tag!r}: {value!r} is not a Python expression",
                            field="tags") from None
        if key in constants:
            raise DataError(where, f"capture constant {key!r} declared twice", field="tags")
        constants[key] = value
    if not ops:
        if constants:
            raise DataError(where, "capture constants without a 'capture:op=...' tag",
                            field="tags")
        return None
    return Target(definition, frozenset(ops), constants)


def targets_by_op(dataset: Dataset) -> dict[str, list[Target]]:
    """Every capture target of a dataset, indexed by op name."""
    found: dict[str, list[Target]] = {}
    for located in dataset.definitions.values():
        target = parse_target(located.value, dataset.where(located))
        if target is not None:
            for op in sorted(target.ops):
                found.setdefault(op, []).append(target)
    return found


def describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"{DTYPE_NAMES.get(value.dtype, str(value.dtype))}{list(value.shape)}"
    return f"{type(value).__name__} {value!r}"


def _bind_axes(definition: Definition, role: str, name: str, axes_names: list[str] | None,
               dtype: str, value: object, axes: dict[str, int]) -> str | None:
    """Check one value against its spec, recording axis sizes; a reason when it differs."""
    if axes_names is None:
        if isinstance(value, torch.Tensor):
            return f"{role} {name}: the definition takes a scalar, the call has a tensor"
        kind = {"bool": bool, "int64": int, "int32": int, "int16": int, "int8": int}
        expected = kind.get(dtype, float)
        ok = isinstance(value, bool) if expected is bool else (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            and (expected is float or isinstance(value, int)))
        return None if ok else f"{role} {name}: scalar {value!r} is not a {dtype}"
    if not isinstance(value, torch.Tensor):
        return f"{role} {name}: the definition takes a tensor, the call has {describe(value)}"
    if DTYPE_NAMES.get(value.dtype) != dtype:
        return f"{role} {name}: dtype {value.dtype} != {dtype}"
    if value.dim() != len(axes_names):
        return f"{role} {name}: rank {value.dim()} != {len(axes_names)}"
    const = definition.const_axes
    for axis, size in zip(axes_names, value.shape):
        if axis in const and const[axis] != size:
            return f"{role} {name}: axis {axis} is {const[axis]}, the call has {size}"
        if axes.setdefault(axis, size) != size:
            return f"{role} {name}: axis {axis} is {axes[axis]} elsewhere, {size} here"
    return None


def same_constant(expected: object, actual: object) -> bool:
    """Equal constants: bools and strings exactly, numbers to a relative 1e-6."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(expected, actual, rel_tol=1e-6, abs_tol=1e-12)
    return expected == actual


def match(target: Target, adapted: Adapted) -> tuple[dict[str, int] | None, str]:
    """``(variable axes, "")`` when the call is a workload of the target, else ``(None, why)``."""
    d = target.definition
    if set(d.inputs) != set(adapted.inputs) or set(d.outputs) != set(adapted.outputs):
        return None, (f"inputs/outputs {sorted(adapted.inputs)}/{sorted(adapted.outputs)} != "
                      f"{sorted(d.inputs)}/{sorted(d.outputs)}")
    if set(target.constants) != set(adapted.constants):
        return None, (f"declares constants {sorted(target.constants)}, the call has "
                      f"{sorted(adapted.constants)}")
    axes: dict[str, int] = {}
    for role, specs, values in (("input", d.inputs, adapted.inputs),
                                ("output", d.outputs, adapted.outputs)):
        for name, spec in specs.items():
            reason = _bind_axes(d, role, name, spec.shape, spec.dtype, values[name], axes)
            if reason:
                return None, reason
    var = {a: axes[a] for a in d.var_axes if a in axes}
    missing = [a for a in d.var_axes if a not in var]
    if missing:
        return None, f"variable axes {missing} appear in no input or output"
    violated = d.violated_constraints(var)
    if violated:
        return None, f"constraint violated: {violated[0]}"
    scope = {**axes, **d.const_axes}
    for name, expression in target.constants.items():
        try:
            expected = eval(expression, {"__builtins__": {}, "math": math}, dict(scope))  # noqa: S307
        except Exception as exc:
            return None, f"constant {name}={expression} cannot be evaluated ({exc})"
        if not same_constant(expected, adapted.constants[name]):
            return None, (f"constant {name}: the definition says {expression} = {expected!r}, "
                          f"the call has {adapted.constants[name]!r}")
    return var, ""


def signature(op: str, adapted: Adapted) -> str:
    """A call's per-shape signature: variable axes by name, everything else by value."""
    var = set(adapted.var_axes)

    def dims(name: str, value: object) -> str:
        if not isinstance(value, torch.Tensor):
            return f"{name}={value!r}"
        names = adapted.axes.get(name, [])
        shown = [a if a in var else str(s) for a, s in zip(names, value.shape)] if len(
            names) == value.dim() else [str(s) for s in value.shape]
        return f"{name} {DTYPE_NAMES.get(value.dtype, value.dtype)}[{','.join(shown)}]"

    parts = [dims(n, v) for n, v in adapted.inputs.items()]
    parts += [f"-> {dims(n, v)}" for n, v in adapted.outputs.items()]
    consts = ", ".join(f"{k}={v!r}" for k, v in sorted(adapted.constants.items()))
    return f"{op}({', '.join(parts)}){' {' + consts + '}' if consts else ''}"
