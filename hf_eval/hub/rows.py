"""Workloads as flat ``datasets`` rows: uuid, definition, axes, input descriptors, provenance.

Arrow has no bfloat16 or FP8, and a workload's tensors can be gigabytes, so rows carry
descriptors (paths into the content-addressed store), never tensor data;
:func:`hf_eval.hub.lazy.with_tensors` turns them into tensors on access. Axes and inputs
differ between definitions, so they are ``Json`` columns (they come back as dicts), and
one feature set serves every definition and the all-definitions config alike.

Splits: ``dev`` is the task's dev UUIDs (in the workload file's order); ``test`` is every
workload of the definition, dev included, because final judgments use every workload
(``docs/architecture.md``, tasks).
"""

from __future__ import annotations

from collections.abc import Iterator

from datasets import Features, Json, Value

from hf_eval.data.errors import DataError
from hf_eval.data.repository import Located
from hf_eval.data.schema import Receipt
from hf_eval.dataset import Dataset

SPLITS = ("dev", "test")


def row_features():
    """The ``datasets.Features`` of one row."""
    return Features({
        "uuid": Value("string"),
        "definition": Value("string"),
        "axes": Json(),
        "inputs": Json(),
        "provenance": {"kind": Value("string"), "origin": Value("string"),
                       "seed": Value("int64"), "case": Value("string"),
                       "outside_domain": Value("string")},
    })


def provenance_summary(receipt: Receipt | None) -> dict:
    """Kind, origin (generator, capture program or import source), seed, case, and why
    the workload lies outside the published curated domain; None where the receipt (or
    its provenance) does not say (``outside_domain`` None: inside the domain)."""
    p = receipt.provenance if receipt is not None else None
    if p is None:
        return {"kind": None, "origin": None, "seed": None, "case": None,
                "outside_domain": None}
    return {"kind": p.kind, "origin": p.generator or p.program or p.source,
            "seed": p.seed, "case": p.case, "outside_domain": p.outside_domain}


def workload_row(dataset: Dataset, row: Located) -> dict:
    """The flat row of one workload line."""
    trace = row.value
    receipt = dataset.receipts.get(trace.workload.uuid)
    return {"uuid": trace.workload.uuid, "definition": trace.definition,
            "axes": dict(trace.workload.axes),
            "inputs": {name: desc.model_dump() for name, desc in trace.workload.inputs.items()},
            "provenance": provenance_summary(receipt.value if receipt else None)}


def check_usable(dataset: Dataset, names: list[str]) -> None:
    """Refuse definitions that a file problem touches (the first problem is raised)."""
    for problem in dataset.problems:
        if any(name in problem.file for name in names) or "captures.jsonl" in problem.file:
            raise problem


def split_rows(dataset: Dataset, names: list[str], split: str) -> Iterator[tuple[str, dict]]:
    """``(uuid, row)`` for each workload of ``names`` in ``split``."""
    if split not in SPLITS:
        raise DataError("split", f"unknown split {split!r} (known: {', '.join(SPLITS)})")
    check_usable(dataset, names)
    for name in names:
        dataset.definition(name)
        rows = dataset.workloads.get(name, [])
        if split == "dev":
            dev = dataset.task(name).dev
            present = {r.value.workload.uuid for r in rows}
            missing = [u for u in dev if u not in present]
            if missing:
                raise DataError(f"tasks/{name}.json", f"dev UUIDs not among the workloads: "
                                f"{missing}", field="dev")
            rows = [r for r in rows if r.value.workload.uuid in set(dev)]
        for row in rows:
            yield row.value.workload.uuid, workload_row(dataset, row)
