"""Build the embedded sample: run each definition's generator over its cases, write tensors,
workload rows and receipts.

Rebuilding is idempotent (UUIDs and content hashes depend only on the generator, the case
and the seed). Tensor files larger than ``COMMIT_LIMIT`` are listed in the definition's
``blob/workloads/<name>/.gitignore``: they stay out of git and are regenerated on first
use by :class:`hf_eval.samples.regenerate.SampleRegenerator`, verified against the hash
recorded here.
"""

from __future__ import annotations

import fcntl
import importlib
import json
from pathlib import Path

import torch

from hf_eval.dtypes import TORCH_DTYPES
from hf_eval.errors import DataError
from hf_eval.repository import Dataset
from hf_eval.samples.common import sample_uuid
from hf_eval.samples.regenerate import REGENERATED_MARK
from hf_eval.schema import (
    Definition,
    Provenance,
    Receipt,
    ScalarInput,
    Workload,
    WorkloadTrace,
    load_json,
)
from hf_eval.store import TensorStore

COMMIT_LIMIT = 256 << 10
CASES_DIR = Path(__file__).parent / "cases"


def cases_path(definition: str) -> Path:
    return CASES_DIR / f"{definition}.json"


def generate_case(definition: Definition, generator: str, case: dict,
                  only: set[str] | None = None,
                  values: dict[str, object] | None = None) -> dict[str, object]:
    """Run the generator for one case and check it returned every input as declared.

    A generator may return an input as a zero-argument callable (e.g. a multi-GB weight
    drawn on demand); only the inputs in ``only`` (default: all) are drawn. ``values`` is
    what the generator already returned for this case, when the caller has called it.
    """
    if values is None:
        module = importlib.import_module(generator)
        values = module.generate(definition.name, dict(case.get("params", {})),
                                 int(case["seed"]))
    where = f"{generator}.generate (case {case['label']!r})"
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


def build_definition(root: Path, definition: Definition) -> list[Receipt]:
    """Write one definition's sample workloads; returns their receipts."""
    spec_file = cases_path(definition.name)
    spec = json.loads(spec_file.read_text())
    store = TensorStore(root)
    blob_dir = f"blob/workloads/{definition.name}"
    rows, receipts, large = [], [], set()
    for case in spec["cases"]:
        values = generate_case(definition, spec["generator"], case)
        where = f"{spec_file.name} case {case['label']!r}"
        axes = infer_axes(definition, values, where)
        violated = definition.violated_constraints(axes)
        if violated:
            raise DataError(where, f"violates constraints {violated}")
        inputs = {}
        for name in definition.inputs:
            value = values[name]
            if isinstance(value, torch.Tensor):
                desc = store.write(value, blob_dir, key=name)
                if (root / desc.path).stat().st_size > COMMIT_LIMIT:
                    large.add(Path(desc.path).name)
                inputs[name] = desc
            else:
                inputs[name] = ScalarInput(type="scalar", value=value)
        uuid = sample_uuid(definition.name, case["label"])
        rows.append(WorkloadTrace(definition=definition.name,
                                  workload=Workload(uuid=uuid, axes=axes, inputs=inputs)))
        receipts.append(Receipt(uuid=uuid, definition=definition.name, provenance=Provenance(
            kind="generated", generator=spec["generator"], seed=int(case["seed"]),
            case=case["label"], params=case.get("params", {}), note=case.get("note", ""),
            description="synthetic sample, not captured data")))
        del values
    workload_file = root / "workloads" / definition.op_type / f"{definition.name}.jsonl"
    workload_file.parent.mkdir(parents=True, exist_ok=True)
    workload_file.write_text("".join(r.model_dump_json(exclude_none=False) + "\n" for r in rows))
    referenced = {Path(d.path).name for r in rows for d in r.workload.inputs.values()
                  if not isinstance(d, ScalarInput)}
    for stale in (root / blob_dir).glob("*.safetensors"):
        if stale.name not in referenced:
            stale.unlink()
    ignore = root / blob_dir / ".gitignore"
    if large:
        ignore.write_text(f"{REGENERATED_MARK}\n"
                          + "".join(f"{n}\n" for n in sorted(large)))
    else:
        ignore.unlink(missing_ok=True)
    return receipts


def write_receipts(root: Path, definition: str, receipts: list[Receipt]) -> None:
    """Replace one definition's receipts in ``captures.jsonl`` (locked: builds may overlap)."""
    path = root / "captures.jsonl"
    path.touch()
    with open(path, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        keep = [line for line in fh.read().splitlines()
                if line.strip() and json.loads(line).get("definition") != definition]
        keep += [r.model_dump_json() for r in receipts]
        keep.sort(key=lambda line: (json.loads(line)["definition"], json.loads(line)["uuid"]))
        fh.seek(0)
        fh.truncate()
        fh.write("".join(line + "\n" for line in keep))


def build(root: str | Path, names: list[str] | None = None) -> list[str]:
    """Build the sample for ``names`` (default: every definition with a cases file)."""
    root = Path(root)
    names = names or sorted(p.stem for p in CASES_DIR.glob("*.json"))
    built = []
    for name in names:
        if not cases_path(name).is_file():
            raise DataError(cases_path(name), "no sample cases for this definition")
        paths = list((root / "definitions").rglob(f"{name}.json"))
        if not paths:
            raise DataError(f"definitions/*/{name}.json", "definition file not found")
        definition = load_json(Definition, paths[0])
        write_receipts(root, name, build_definition(root, definition))
        built.append(name)
    return built


__all__ = ["build", "Dataset"]
