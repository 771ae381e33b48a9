"""Rows whose tensors are materialised on access: ``with_tensors(rows, root, device)``.

``rows`` is a ``datasets.Dataset`` of workloads, or an ``IterableDataset`` of them
(``load_dataset(..., streaming=True)``): the builder's rows
(``inference_kernels_dataset.py``) or a viewer config's rows
(``load_dataset(<repo>, <definition>)``), both with ``uuid`` and ``inputs`` columns, or
rows of FlashInfer Trace workload lines (a ``workload`` column). The returned dataset (of
the same kind) adds a ``tensors`` column: a :class:`RowTensors` mapping of the row's inputs in
the definition's argument order (tensors on ``device``, scalars as Python numbers). The
first access to it fetches that row's tensors through the tensor store (local file, Git
LFS, sample regeneration, Hub at the pinned commit), verified and shape-checked, and
nothing else. Reading rows or columns without touching ``tensors`` fetches nothing
(``datasets`` runs a transform on whole rows even for ``rows["axes"]``, so the transform
itself must stay free of I/O).

The row's descriptors must equal the ones in ``root``'s workload files: rows from another
version of the dataset are refused rather than paired with the wrong tensors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import torch
from datasets import IterableDataset

from hf_eval.data.errors import DataError
from hf_eval.data.repository import Located
from hf_eval.dataset import Dataset, open_dataset


def _descriptors(inputs: dict) -> dict[str, str]:
    """``{input: path}`` of the safetensors descriptors in a row (either row layout)."""
    return {name: d["path"] for name, d in (inputs or {}).items()
            if isinstance(d, dict) and d.get("type") == "safetensors"}


class RowTensors(Mapping):
    """One row's inputs by name; the first access loads all of them (verified) and keeps them."""

    def __init__(self, source: Dataset, located: Located, device: str | torch.device) -> None:
        self._source = source
        self._located = located
        self._device = device
        self._definition = source.definition(located.value.definition)
        self._values: dict[str, object] | None = None

    def _load(self) -> dict[str, object]:
        if self._values is None:
            values = self._source.materialise_inputs(self._definition, self._located,
                                                     self._device)
            self._values = dict(zip(self._definition.inputs, values))
        return self._values

    def __getitem__(self, name: str) -> object:
        if name not in self._definition.inputs:
            raise KeyError(name)
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._definition.inputs)

    def __len__(self) -> int:
        return len(self._definition.inputs)

    @property
    def loaded(self) -> bool:
        return self._values is not None

    def args(self) -> list[object]:
        """The inputs as positional arguments of the reference or a solution."""
        return list(self._load().values())

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded"
        return f"RowTensors({self._located.value.workload.uuid}, {list(self)}, {state})"


def with_tensors(rows, root: str | Path = ".", device: str | torch.device = "cpu",
                 dataset: Dataset | None = None):
    """``rows`` with a lazily loaded ``tensors`` column (see the module docstring)."""
    source = dataset or open_dataset(root)
    index: dict[str, Located] = {row.value.workload.uuid: row
                                 for found in source.workloads.values() for row in found}

    def lazy(uuid: str, inputs: dict | None) -> RowTensors:
        located = index.get(uuid)
        if located is None:
            raise DataError(str(source.root), f"workload {uuid} is not in this dataset root")
        trace = located.value
        on_disk = _descriptors({n: d.model_dump() for n, d in trace.workload.inputs.items()})
        if inputs is not None and _descriptors(inputs) != on_disk:
            raise DataError(source.where(located), f"the row of workload {uuid} names other "
                            "tensors than this file: the rows come from another version")
        return RowTensors(source, located, device)

    def transform(batch: dict) -> dict:
        if "uuid" in batch:
            pairs = zip(batch["uuid"], batch.get("inputs") or [None] * len(batch["uuid"]))
        elif "workload" in batch:
            pairs = ((w["uuid"], w.get("inputs")) for w in batch["workload"])
        else:
            return batch  # columns without the workload's identity: nothing to attach
        return {**batch, "tensors": [lazy(uuid, inputs) for uuid, inputs in pairs]}

    def attach(row: dict) -> dict:
        """One streamed row: the same as ``transform`` on a batch of one."""
        if "uuid" in row:
            return {**row, "tensors": lazy(row["uuid"], row.get("inputs"))}
        if "workload" in row:
            return {**row, "tensors": lazy(row["workload"]["uuid"],
                                           row["workload"].get("inputs"))}
        raise DataError("rows", "a streamed row has neither a 'uuid' nor a 'workload' "
                        f"column (columns: {sorted(row)})")

    if isinstance(rows, IterableDataset):
        # Streaming has no transform on access; ``map`` is lazy there (it runs as rows are
        # iterated), and ``lazy`` itself does no I/O, so nothing is fetched until a row's
        # ``tensors`` is read. The result has no declared features: a ``RowTensors`` has
        # no Arrow type, and ``map`` would otherwise try to encode it.
        return rows.map(attach, features=None)
    return rows.with_transform(transform)
