"""A dataset ready to use: its files (:mod:`hf_eval.data.repository`) and a store for its tensors.

``open_dataset(root)`` reads the files and gives the tensor store its resolver chain, in
this order after the local file: a Git LFS pointer in a clone (:mod:`hf_eval.data.lfs`), the
deterministic regeneration of generated samples (:mod:`hf_eval.samples.regenerate`;
local, declines anything else at once), then the Hub at the pinned commit
(:mod:`hf_eval.data.hub_resolver`; network, last, so a regenerable sample never waits on the Hub or
fails offline). ``resolvers=[]`` reads only what is on disk (``check``, ``list``).

The factory lives here rather than on the data class so that nothing points back: the
regenerator reads the files (:class:`~hf_eval.data.repository.DatasetFiles`), the store holds
the regenerator, and the :class:`Dataset` holds the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import torch

from hf_eval.data import memory
from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.errors import DataError
from hf_eval.data.hub_resolver import HubResolver
from hf_eval.data.lfs import GitLfsResolver
from hf_eval.data.repository import DatasetFiles, Located
from hf_eval.data.schema import Definition, SafetensorsInput, ScalarInput, WorkloadTrace
from hf_eval.data.store import Resolver, TensorStore
from hf_eval.samples.regenerate import DrawnInMemory, SampleRegenerator


@dataclass
class Dataset(DatasetFiles):
    """The files of a dataset root and the store its workloads' tensors load through."""

    store: TensorStore = field(kw_only=True)
    """The store the workloads' tensors load through: under the root, or under a separate
    data root, with its chain of resolvers for absent files."""
    drawn: DrawnInMemory | None = field(default=None, kw_only=True)
    """Where inputs listed as regenerated and absent from disk are drawn in memory (None:
    read only what is on disk or what the store's resolvers bring)."""

    def materialise_inputs(self, definition: Definition, row: Located,
                           device: str | torch.device = "cpu",
                           shared: bool = False, mapped: bool = False,
                           provided: dict[str, torch.Tensor] | None = None) -> list[object]:
        """The workload's inputs in argument order, loaded, verified and shape-checked.

        ``shared`` loads CPU tensors into shared memory (for the audit's worker processes);
        ``mapped`` maps them read-only from their files instead (the checker: a multi-GB
        weight whose values no rule reads then costs no resident memory). ``provided``
        holds tensors the caller has already verified (the checker's in-memory
        regeneration); they are shape- and dtype-checked, not loaded. A row with a
        ``draw_inputs`` method (a fresh case) provides its own tensors the same way.
        """
        trace: WorkloadTrace = row.value
        where = self.where(row)
        draw = getattr(row, "draw_inputs", None)
        if provided is None:
            provided = {}
            if draw is not None:
                # A row that exists only in memory (a fresh case, ``samples/fresh.py``)
                # draws its own tensors; its other inputs (shared weights) are the sample's.
                provided = draw(definition, device, shared)
            absent = {n: p for n, p in self.drawn.absent(row).items()
                      if n not in provided} if self.drawn is not None else {}
            if absent:  # listed as regenerated and not on disk: drawn, never written
                provided = {**provided, **self.drawn.inputs(
                    row, absent, f"{device}/{shared}", lambda t: _placed(t, device, shared))}
        missing = [a for a in definition.var_axes if a not in trace.workload.axes]
        if missing:
            raise DataError(where, f"missing variable axes {missing}", field="workload.axes")
        inputs: list[object] = []
        for name, spec in definition.inputs.items():
            desc = trace.workload.inputs.get(name)
            if desc is None:
                raise DataError(where, "missing input", field=f"workload.inputs.{name}")
            if isinstance(desc, ScalarInput):
                if spec.shape is not None:
                    raise DataError(where, "a tensor input cannot be a scalar",
                                    field=f"workload.inputs.{name}")
                inputs.append(desc.value)
                continue
            if not isinstance(desc, SafetensorsInput):
                raise DataError(where, "random inputs are not allowed in this dataset",
                                field=f"workload.inputs.{name}")
            if definition.shape_of(spec, trace.workload.axes) is None:
                raise DataError(where, "a scalar input must be a scalar descriptor",
                                field=f"workload.inputs.{name}")
            if provided and name in provided:
                tensor = provided[name]
            else:
                tensor = self.store.load(desc, device, shared=shared, mapped=mapped)
            self._check_shape(definition, row, name, desc, tuple(tensor.shape))
            if tensor.dtype != TORCH_DTYPES[spec.dtype]:
                raise DataError(desc.path, f"tensor dtype {tensor.dtype} does not match "
                                f"the definition's {spec.dtype}", field=name)
            inputs.append(tensor)
        return inputs

    def _check_shape(self, definition: Definition, row: Located, name: str,
                     desc: SafetensorsInput, actual: tuple[int, ...]) -> None:
        """Blame a shape mismatch on what decided the expected size.

        A variable axis's size comes from the workload line, so a mismatch along it names
        that file, line and axis (the tensor is named as the evidence); a constant axis or
        a wrong number of dimensions is the tensor's fault, so the tensor file is named.
        """
        spec = definition.inputs[name]
        axes = row.value.workload.axes
        expected = definition.shape_of(spec, axes)
        if actual == expected:
            return
        if len(actual) == len(expected):
            for axis, want, got in zip(spec.shape, expected, actual):
                if want != got and axis in definition.var_axes:
                    raise DataError(self.where(row), f"is {want}, but input {name!r} "
                                    f"({desc.path}) has {got} along {axis} (shape "
                                    f"{actual}, declared {list(spec.shape)})",
                                    field=f"workload.axes.{axis}")
        raise DataError(desc.path, f"tensor shape {actual} does not match the definition's "
                        f"{expected}", field=name)


def _placed(tensor: torch.Tensor, device: str | torch.device, shared: bool) -> torch.Tensor:
    """A tensor drawn on the CPU, where a reader asked for it (``shared``: a sealed memfd,
    as :func:`hf_eval.data.tensorfile.read` puts a tensor read from its file)."""
    if torch.device(device).type != "cpu":
        return tensor.to(device)
    if not shared:
        return tensor
    nbytes = tensor.numel() * tensor.element_size()
    raw = memory.allocate(nbytes)[:nbytes]
    raw.copy_(tensor.contiguous().view(-1).view(torch.uint8))
    return raw.view(tensor.dtype).reshape(tensor.shape)


def open_dataset(root: str | Path, resolvers: list[Resolver] | None = None,
                 data_root: str | Path | None = None) -> Dataset:
    """The dataset at ``root``: every file read (bad ones in ``problems``), tensors through
    ``resolvers`` when a file is absent (default: LFS, sample regeneration, the Hub).

    ``data_root`` is a folder holding the tensors under the same relative paths (a
    materialised copy kept apart from the clone): the store reads and verifies them there
    instead of under ``root``."""
    files = DatasetFiles.read(root)
    drawn = None
    if resolvers is None:
        resolvers = [GitLfsResolver(), SampleRegenerator(files), HubResolver.for_root(files.root)]
        drawn = DrawnInMemory(files)
    values = {f.name: getattr(files, f.name) for f in fields(DatasetFiles)}
    store = TensorStore(Path(data_root) if data_root is not None else files.root, resolvers)
    return Dataset(**values, store=store, drawn=drawn)
