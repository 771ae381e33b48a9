"""Build the embedded sample: run each definition's generator over its cases, write tensors,
workload rows and receipts (``python -m hf_eval samples build``).

Rebuilding is idempotent (UUIDs and content hashes depend only on the generator, the case
and the seed). Tensor files larger than ``COMMIT_LIMIT`` are listed in the definition's
``blob/workloads/<name>/.gitignore``: they stay out of git and are regenerated on first
use by :class:`hf_eval.samples.regenerate.SampleRegenerator`, verified against the hash
recorded here.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import (
    Definition,
    Provenance,
    Receipt,
    ScalarInput,
    Workload,
    WorkloadTrace,
    load_json,
)
from hf_eval.data.store import TensorStore
from hf_eval.families.registry import family_of
from hf_eval.samples import cases as recipes
from hf_eval.samples.cases import (
    SampleCase,
    generate_case,
    infer_axes,
    load_cases,
    sample_uuid,
)
from hf_eval.samples.regenerate import REGENERATED_MARK

COMMIT_LIMIT = 256 << 10


def sample_receipt(definition: str, uuid: str, generator: str, case: SampleCase) -> Receipt:
    """A sample workload's receipt, in the published receipts' format: labelled generated,
    with its generator, seed and case in the provenance (and ``outside_domain`` for a case
    outside the published curated domain), and no key that says nothing (no engine
    output: a sample is judged against the reference only)."""
    details = dict(kind="generated", generator=generator, seed=case.seed, case=case.label,
                   params=case.params, note=case.note, outside_domain=case.outside_domain,
                   description="synthetic sample, not captured data")
    return Receipt(uuid=uuid, definition=definition, provenance=Provenance(
        **{k: v for k, v in details.items() if v is not None and v != {} and v != ""}))


def build_definition(root: Path, definition: Definition) -> list[Receipt]:
    """Write one definition's sample workloads; returns their receipts."""
    spec = load_cases(definition.name)
    if spec is None:
        raise DataError(recipes.cases_path(definition.name), "no sample cases for this "
                        "definition")
    family = family_of(definition, "sample generator")
    store = TensorStore(root)
    blob_dir = f"blob/workloads/{definition.name}"
    rows, receipts, large = [], [], set()
    for case in spec.cases:
        values = generate_case(definition, case)
        where = f"{definition.name}.cases.json case {case.label!r}"
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
        uuid = sample_uuid(definition.name, case.label)
        rows.append(WorkloadTrace(definition=definition.name,
                                  workload=Workload(uuid=uuid, axes=axes, inputs=inputs)))
        receipts.append(sample_receipt(definition.name, uuid, family.module, case))
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
        keep += [r.to_line() for r in receipts]
        keep.sort(key=lambda line: (json.loads(line)["definition"], json.loads(line)["uuid"]))
        fh.seek(0)
        fh.truncate()
        fh.write("".join(line + "\n" for line in keep))


def build(root: str | Path, names: list[str] | None = None) -> list[str]:
    """Build the sample for ``names`` (default: every definition with a cases file)."""
    root = Path(root)
    names = names or sorted(recipes.cases_paths())
    built = []
    for name in names:
        if not recipes.cases_path(name).is_file():
            raise DataError(recipes.cases_path(name), "no sample cases for this definition")
        paths = list((root / "definitions").rglob(f"{name}.json"))
        if not paths:
            raise DataError(f"definitions/*/{name}.json", "definition file not found")
        definition = load_json(Definition, paths[0])
        write_receipts(root, name, build_definition(root, definition))
        built.append(name)
    return built

