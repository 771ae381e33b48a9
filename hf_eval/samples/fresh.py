"""Fresh workloads: new cases drawn at audit time, from a seed the candidate never sees.

The published workloads can be learnt: a kernel could recognise their inputs and return
stored outputs, or be tuned to their index patterns and routing. ``audit --suite fresh``
therefore audits cases that exist nowhere before the audit starts. For every sample case
of a definition (its recipe: generator, label and params, the edge case it stands for),
it draws a new case from the same generator and params, with a seed derived from the
audit's secret (:attr:`hf_eval.judge.audit.Audit.secret`, which stays in the audit's process;
the worker only ever receives tensors). Shapes and structural params are the recipe's;
every value, routing, page order and index pattern the generator draws from its seed is
new. Reports name the recipe and the SHA-256 of the seed, never the seed.

Nothing of a fresh case is written anywhere: its inputs are drawn into memory when the
audit materialises the case (again, from the same seed, if the audit reloads them after a
failed candidate), and its reference is never put in the reference cache.

Shared weights: an input the generator returns as a zero-argument callable is a tensor
drawn on demand because it is large and the same for every workload of the definition
(a layer's weight, e.g. the 4.5 GB grouped-GEMM weight). A fresh case does not draw it
again; it reuses the sample's stored file (loaded and verified through the tensor store,
or drawn in memory like any sample tensor not on disk), so a fresh case costs the same memory
as a sample case. The sample's workloads must all reference one file for such an input;
otherwise the input is not shared and this is refused rather than drawn.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from dataclasses import dataclass
from pathlib import Path

import torch

from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.errors import DataError
from hf_eval.data.repository import DatasetFiles, Located
from hf_eval.data.schema import Definition, SafetensorsInput, ScalarInput, Workload, WorkloadTrace
from hf_eval.families.registry import family_of
from hf_eval.samples.cases import (
    SAMPLE_NAMESPACE,
    SampleCase,
    cases_path,
    generate_case,
    infer_axes,
    load_cases,
)

#: Where the descriptor of a drawn input points: a name for messages, never a file.
FRESH_PREFIX = "fresh:"


def fresh_seed(secret: bytes, definition: str, label: str) -> int:
    """The 63-bit seed of one recipe's fresh case: HMAC-SHA256 of the audit's secret."""
    digest = hmac.new(secret, f"fresh/{definition}/{label}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def seed_digest(seed: int) -> str:
    """What a report says about a fresh seed: its SHA-256, not the seed."""
    return hashlib.sha256(str(seed).encode()).hexdigest()


@dataclass
class FreshRow(Located):
    """A workload row that exists only in this audit: a recipe and a secret-derived seed.

    ``value`` is an ordinary :class:`WorkloadTrace` (UUID, axes, descriptors), so the
    audit plans, reports and shape-checks it like any row; the descriptors of drawn
    inputs name ``fresh:<definition>/<label>/<input>`` and are never read, because
    :meth:`draw_inputs` provides those tensors (``Dataset.materialise_inputs`` asks it).
    """

    case: SampleCase | None = None
    """The recipe, its seed replaced by the fresh one."""
    seed_sha256: str = ""
    """The SHA-256 (hex) of the fresh seed: what reports record instead of the seed."""
    stored: frozenset[str] = frozenset()
    """Inputs taken from the sample's stored file (shared weights), by name."""
    fresh: bool = True
    """Tells the audit not to put this row's reference in the on-disk cache."""

    @property
    def recipe(self) -> str:
        return self.case.label

    def report_fields(self) -> dict:
        """What a report line records about this row (never the seed itself)."""
        return {"recipe": self.recipe, "seed_sha256": self.seed_sha256}

    def draw_inputs(self, definition: Definition, device: str | torch.device = "cpu",
                    shared: bool = False) -> dict[str, torch.Tensor]:
        """The drawn tensor inputs, in memory on ``device`` (``shared``: CPU shared memory,
        for a worker), drawn anew on every call (the candidate may have changed the last)."""
        names = {n for n, d in self.value.workload.inputs.items()
                 if isinstance(d, SafetensorsInput) and n not in self.stored}
        values = generate_case(definition, self.case, only=names)
        device = torch.device(device)
        if device.type != "cpu":
            return {n: values[n].to(device) for n in names}
        return {n: values[n].share_memory_() if shared else values[n] for n in names}


def _stored_descriptors(dataset: DatasetFiles, definition: Definition,
                        lazy: list[str]) -> dict[str, SafetensorsInput]:
    """For each input the generator draws on demand, the one file the sample shares."""
    rows = dataset.workloads.get(definition.name, [])
    found: dict[str, SafetensorsInput] = {}
    for name in lazy:
        paths = {r.value.workload.inputs[name].path for r in rows
                 if isinstance(r.value.workload.inputs.get(name), SafetensorsInput)}
        if len(paths) != 1:
            raise DataError(f"workloads/{definition.op_type}/{definition.name}.jsonl",
                            f"fresh: input {name!r} is drawn on demand (a shared weight), so "
                            "a fresh case reuses the sample's file, but the sample's workloads "
                            f"reference {len(paths)} files for it, not one")
        found[name] = SafetensorsInput(type="safetensors", path=paths.pop(), tensor_key=name)
    return found


def fresh_rows(dataset: DatasetFiles, name: str, secret: bytes) -> list[FreshRow]:
    """One fresh row per sample recipe of definition ``name`` (none without a cases file).

    Drawing a case once here gives its axes (the recipe's shapes); the tensors are dropped
    and drawn again, from the same seed, when the audit materialises the row.
    """
    spec = load_cases(name)
    if spec is None:
        return []
    definition = dataset.definition(name)
    family = family_of(definition, "sample generator")
    digest = hashlib.sha256(secret).hexdigest()
    rows: list[FreshRow] = []
    stored: dict[str, SafetensorsInput] | None = None
    for recipe in spec.cases:
        label = recipe.label
        seed = fresh_seed(secret, name, label)
        case = recipe.model_copy(update={"seed": seed})
        returned = family.generate(definition, dict(case.params), seed)
        lazy = [n for n, v in returned.items() if callable(v)]
        if stored is None:
            stored = _stored_descriptors(dataset, definition, lazy)
        values = generate_case(definition, case, only=set(definition.inputs) - set(stored),
                               values=returned)
        del returned
        where = f"fresh case of {cases_path(name).name} recipe {label!r}"
        axes = infer_axes(definition, {**values, **_placeholders(definition, stored)}, where)
        inputs: dict[str, SafetensorsInput | ScalarInput] = {}
        for input_name, spec_in in definition.inputs.items():
            if input_name in stored:
                inputs[input_name] = stored[input_name]
            elif spec_in.shape is None:
                inputs[input_name] = ScalarInput(type="scalar", value=values[input_name])
            else:
                inputs[input_name] = SafetensorsInput(
                    type="safetensors", tensor_key=input_name,
                    path=f"{FRESH_PREFIX}{name}/{label}/{input_name}")
        del values
        row_uuid = str(uuid.uuid5(SAMPLE_NAMESPACE, f"fresh/{digest}/{name}/{label}"))
        trace = WorkloadTrace(definition=name,
                              workload=Workload(uuid=row_uuid, axes=axes, inputs=inputs))
        rows.append(FreshRow(value=trace, path=Path(f"{FRESH_PREFIX}{name}/{label}"),
                             case=case, seed_sha256=seed_digest(seed),
                             stored=frozenset(stored)))
    return rows


def _placeholders(definition: Definition, stored: dict[str, SafetensorsInput]) -> dict:
    """Shape-only stand-ins of stored inputs for axis inference (constant axes only).

    An input drawn on demand is a shared weight: its axes are the definition's constants,
    so the variable axes come from the drawn inputs; a meta tensor of the constant shape
    keeps :func:`infer_axes` checking the rest without reading gigabytes.
    """
    out = {}
    for name in stored:
        spec = definition.inputs[name]
        const = definition.const_axes
        if any(axis not in const for axis in spec.shape):
            raise DataError(f"definitions/{definition.op_type}/{definition.name}.json",
                            f"fresh: input {name!r} is drawn on demand but has a variable "
                            "axis: it cannot be a weight shared by every workload",
                            field=f"inputs.{name}")
        out[name] = torch.empty([const[a] for a in spec.shape], dtype=TORCH_DTYPES[spec.dtype],
                                device="meta")
    return out


class FreshSource:
    """The fresh rows of one audit: drawn from its secret, built once per definition."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._rows: dict[str, list[FreshRow]] = {}

    def rows(self, dataset: DatasetFiles, name: str) -> list[FreshRow]:
        if name not in self._rows:
            self._rows[name] = fresh_rows(dataset, name, self._secret)
        return self._rows[name]
