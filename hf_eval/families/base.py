"""The contract of an op family: what the harness asks of one, and the defaults.

Why one record per family: the sample builder, the checker, the audit, the benchmark and
the roofline each need something that only the family knows (how its inputs are drawn,
which values are valid, how its structure is counted). Before, each found it in its own
place (a module path in a cases file, ``importlib`` by ``op_type``, dicts and if-chains);
a :class:`Family` puts the answers side by side, and :mod:`hf_eval.families.registry`
finds it by the definition's ``op_type``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from hf_eval.data.schema import Definition

#: What a generator returns and what the value rules read: every input of a definition by
#: name (a generator may give a large shared weight as a zero-argument callable instead).
Inputs = dict[str, Any]


class NoStructure(BaseModel):
    """The benchmark-shape structure of a family whose axes say everything: none allowed."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Count:
    """One exact count the roofline formulas use (a ``<definition>.roofline.json``'s
    ``derived``), read from a workload's inputs."""

    needs: tuple[str, ...]
    """The names of the (small) inputs the count reads, so a report can load only those."""
    count: Callable[[Inputs], int]
    """Computes the count from those inputs, given by name."""


def no_checks(definition: str, inputs: Inputs) -> list[str]:
    """No value rule beyond the definition's shapes, dtypes and constraints."""
    return []


def no_counts(definition: Definition, axes: dict[str, int], structure: BaseModel
              ) -> dict[str, int]:
    """A family whose roofline needs no count beyond the axes."""
    return {}


@dataclass(frozen=True)
class Family:
    """Everything the harness knows about one op family."""

    op_type: str
    """The ``op_type`` of the definitions the family serves; the registry finds the family
    by it."""
    module: str
    """The module that declares the family; a generated workload's receipt names it."""
    generate: Callable[[Definition, dict, int], Inputs]
    """``generate(definition, params, seed)``: every input of a sample case by name,
    deterministic across machines (NumPy PCG64, never torch's RNG); ``definition`` is
    the :class:`Definition` itself, so the constant sizes come from its ``const_axes``
    (never a table of the family's own) and its ``name`` seeds the streams."""
    bench_inputs: Callable[[Definition, dict[str, int], Any, torch.Generator, str],
                           Inputs] | None = None
    """``bench_inputs(definition, axes, structure, generator, device)``: the inputs of one
    benchmark shape, drawn on the device with torch's generator (timing only, never
    stored); ``structure`` is the shape file's ``structure``, validated as
    ``bench_structure``; None: the family has no benchmark shapes."""
    check: Callable[[str, Inputs], list[str]] = no_checks
    """``check(definition, inputs)``: one message per violated value rule (the checker)."""
    bench_structure: type[BaseModel] = NoStructure
    """The model a benchmark shape's ``structure`` is validated as; the default,
    :class:`NoStructure`, allows none."""
    counts: dict[str, Count] = field(default_factory=dict)
    """The exact roofline counts, by the derived name a roofline entry uses."""
    structure_counts: Callable[[Definition, dict[str, int], Any], dict[str, int]] = no_counts
    """``structure_counts(definition, axes, structure)``: the same counts as ``counts``
    from a shape file alone (the benchmark inputs fix them), so a report can recompute a
    roofline without the inputs."""
    fresh_content: Callable[[list[object], torch.Generator], list[object]] | None = None
    """``fresh_content(inputs, generator)``: the family's own second-input-set transform;
    None means the audit's default (floating-point inputs resampled from their own
    values, :func:`hf_eval.judge.input_sets.resample_floats`)."""
    undecided_rows: Callable[[list[object], tuple[torch.Tensor, ...], torch.Tensor],
                             torch.Tensor] | None = None
    """``undecided_rows(inputs, outputs, rows)``: a bool mask over the outputs' rows, of
    those marked in ``rows`` (the ones that differ from the truth), whose answer the
    definition leaves open (a selection boundary closer than FP32 rounding allows,
    which its valid workloads exclude but content the audit draws itself, fresh sets
    and benchmark shapes, can meet) and where ``outputs`` hold one of the answers it
    allows there; such rows are not judged further. Open rows are computed from the
    inputs alone, so a candidate cannot choose them, and an answer no FP32 rounding
    explains stays judged; None: every row is judged."""
    open_truth: Callable[[list[object], tuple[torch.Tensor, ...], tuple[torch.Tensor, ...],
                          torch.Tensor], tuple[torch.Tensor, ...]] | None = None
    """``open_truth(inputs, outputs, reference, rows)``: the reference with the ``rows``
    that ``undecided_rows`` settled replaced by the answer ``outputs`` chose there, and
    every other output of those rows computed from that choice as the definition does,
    so they are judged as any row is. Needed by a family whose definitions have more
    than one output (without it their open rows stay judged exactly)."""
