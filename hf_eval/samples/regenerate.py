"""Large sample tensors drawn again from their generator, verified against their hash.

Sample tensors over the commit limit are not in git; ``samples build`` lists them in their
folder's ``.gitignore``. A reader of a workload's inputs (the audit, the checker) draws
such a tensor in memory and never writes it (:class:`DrawnInMemory`); a reader that needs
the file itself gets it written by the store's resolver (:class:`SampleRegenerator`).
Either way the bytes must hash to the content-addressed name: a generator whose output
changed fails loudly rather than silently replacing the recorded data.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import torch

from hf_eval.data import tensorfile
from hf_eval.data.errors import DataError
from hf_eval.data.repository import DatasetFiles, Located
from hf_eval.data.schema import Definition, SafetensorsInput
from hf_eval.data.store import Expected, TensorStore
from hf_eval.samples.cases import SampleCase, case_by_label, generate_case, load_cases

#: The first line ``samples build`` writes into a blob directory's ``.gitignore``. The
#: text is a format marker of the dataset's files (it names this module's old path), so it
#: never changes.
REGENERATED_MARK = "# regenerated on first use (hf_eval.samples.regenerate)"


def listed_as_regenerated(root: Path, relpath: str) -> bool:
    """Whether ``samples build`` left this tensor out of git, to be drawn again when read.

    Such a file is absent by design in a fresh clone; any other absent tensor was committed
    (or published) and its absence is a problem. The record is the ``.gitignore`` that
    ``samples build`` writes beside the files, headed by ``REGENERATED_MARK``.
    """
    ignore = Path(root) / relpath
    ignore = ignore.parent / ".gitignore"
    try:
        lines = ignore.read_text().splitlines()
    except OSError:
        return False
    return bool(lines) and lines[0] == REGENERATED_MARK and Path(relpath).name in lines[1:]


def _case_of(files: DatasetFiles, row: Located, where: str
             ) -> tuple[Definition, SampleCase] | None:
    """(definition, recipe) behind a generated workload row, or None when it has none."""
    trace = row.value
    receipt = files.receipts.get(trace.workload.uuid)
    if receipt is None or receipt.value.kind != "generated":
        return None
    definition = files.definition(trace.definition)
    spec = load_cases(definition.name)
    if spec is None:
        return None
    return definition, case_by_label(spec, receipt.value.provenance.case, where)


def regenerate_in_memory(files: DatasetFiles, row: Located,
                         names: set[str]) -> dict[str, torch.Tensor]:
    """Draw the named inputs of a generated workload, verified, without writing anything.

    For a reader that must not write into the dataset (the checker): each tensor's
    safetensors bytes are hashed in memory and must match the content-addressed name.
    """
    found = _case_of(files, row, files.where(row))
    if found is None:
        raise DataError(files.where(row), "not a generated sample workload: its tensors "
                        "cannot be regenerated")
    definition, case = found
    values = generate_case(definition, case, only=names)
    for name in sorted(names):
        desc = row.value.workload.inputs[name]
        digest = tensorfile.sha256(name, values[name])
        if digest != Path(desc.path).name.removesuffix(".safetensors"):
            raise DataError(desc.path, f"regenerated tensor hashes to {digest}, not the "
                            "recorded hash: the generator no longer reproduces this sample")
    return values


class DrawnInMemory:
    """Generated samples' large tensors drawn in memory for a reader of inputs, never written.

    An audit reads every input through :meth:`Dataset.materialise_inputs`, which asks this
    for the tensors listed as regenerated and absent from disk: each is drawn by its
    generator, verified against its content-addressed name, and kept while the reader
    stays on the same definition (its workloads share a weight by path, so a multi-GB
    weight is drawn once per definition, not once per workload). Nothing reaches the
    disk; a line on stderr says what was drawn.
    """

    def __init__(self, files: DatasetFiles) -> None:
        self.files = files
        #: tensors drawn for ``self.holding``, by relative path
        self.kept: dict[str, torch.Tensor] = {}
        #: the definition and the placement (device, shared or not) ``kept`` holds
        self.holding: tuple[str, str] | None = None

    def absent(self, row: Located) -> dict[str, str]:
        """The row's inputs (name -> relative path) listed as regenerated and not on disk."""
        return {name: desc.path for name, desc in row.value.workload.inputs.items()
                if isinstance(desc, SafetensorsInput)
                and not (self.files.root / desc.path).is_file()
                and listed_as_regenerated(self.files.root, desc.path)}

    def inputs(self, row: Located, names: dict[str, str], placement: str,
               place: Callable[[torch.Tensor], torch.Tensor]) -> dict[str, torch.Tensor]:
        """The named inputs (name -> path, from :meth:`absent`), drawn or kept; a drawn one
        goes once through ``place``, which puts it where the reader wants it (a device,
        shared memory), ``placement`` naming that place."""
        trace = row.value
        if (trace.definition, placement) != self.holding:
            self.kept.clear()  # one definition's tensors, in one place, at a time
            self.holding = (trace.definition, placement)
        todo = {name for name, path in names.items() if path not in self.kept}
        while todo:
            # A row drawn from a sample (a fresh case) shares its weights by path with the
            # sample's own row, whose receipt names the generator.
            source = self._generated_row(row, names[min(todo)])
            mine = {name for name in todo  # at least min(todo), by _generated_row
                    if source.value.workload.inputs.get(name) == trace.workload.inputs[name]}
            print(f"drawing {len(mine)} sample tensor(s) of workload "
                  f"{source.value.workload.uuid} ({trace.definition}) in memory from its "
                  f"generator, verified, not written: {', '.join(sorted(mine))}",
                  file=sys.stderr)
            values = regenerate_in_memory(self.files, source, mine)
            for name in sorted(mine):
                self.kept[names[name]] = place(values.pop(name))
            todo -= mine
        return {name: self.kept[path] for name, path in names.items()}

    def _generated_row(self, row: Located, path: str) -> Located:
        """``row`` when its receipt says generated, else a generated row that uses ``path``
        for the same input."""
        receipts = self.files.receipts
        candidates = [row, *self.files.workloads.get(row.value.definition, [])]
        name = next(n for n, d in row.value.workload.inputs.items()
                    if isinstance(d, SafetensorsInput) and d.path == path)
        for other in candidates:
            receipt = receipts.get(other.value.workload.uuid)
            desc = other.value.workload.inputs.get(name)
            uses = isinstance(desc, SafetensorsInput) and desc.path == path
            if uses and receipt is not None and receipt.value.kind == "generated":
                return other
        raise DataError(path, "listed as regenerated, but no generated sample workload of "
                        f"{row.value.definition} uses it: it cannot be drawn")


class SampleRegenerator:
    """The store's resolver for generated samples' large tensors, for a reader that needs
    the file itself (an export, say); readers of inputs draw them in memory
    (:class:`DrawnInMemory`)."""

    name = "sample-regenerator"

    def __init__(self, files: DatasetFiles) -> None:
        self.files = files

    def fetch(self, store: TensorStore, relpath: str, expected: Expected | None) -> bool:
        if not listed_as_regenerated(store.root, relpath):
            return False  # committed: its absence is the data's problem, never repaired
        for rows in self.files.workloads.values():
            for row in rows:
                trace = row.value
                uses = any(isinstance(d, SafetensorsInput) and d.path == relpath
                           for d in trace.workload.inputs.values())
                if not uses:
                    continue
                found = _case_of(self.files, row, relpath)
                if found is None:
                    receipt = self.files.receipts.get(trace.workload.uuid)
                    if receipt is None or receipt.value.kind != "generated":
                        continue
                    return False  # generated, but its recipes are not in this harness
                definition, case = found
                # Draw every missing tensor of this workload in one go (a generator may
                # draw a multi-GB weight: once, not once per file), and nothing else.
                missing = {name for name, desc in trace.workload.inputs.items()
                           if isinstance(desc, SafetensorsInput)
                           and (desc.path == relpath or not (store.root / desc.path).is_file())}
                missing = {name for name in missing
                           if listed_as_regenerated(store.root, trace.workload.inputs[name].path)}
                print(f"regenerating {len(missing)} sample tensor(s) of workload "
                      f"{trace.workload.uuid} ({definition.name}) from its generator: "
                      f"{', '.join(sorted(missing))}", file=sys.stderr)
                values = generate_case(definition, case, only=missing)
                for name in sorted(missing):
                    desc = trace.workload.inputs[name]
                    written = store.write(values[name], str(Path(desc.path).parent), key=name)
                    if written.path != desc.path:
                        (store.root / written.path).unlink(missing_ok=True)
                        raise DataError(desc.path, "regenerated tensor hashes to "
                                        f"{Path(written.path).stem}, not the recorded hash: "
                                        "the generator no longer reproduces this sample")
                return True
        return False
