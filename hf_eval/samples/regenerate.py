"""Regenerate large sample tensors on first use, verified against their recorded hash.

Sample tensors over the commit limit are not in git. When the store meets such a missing
file it asks this resolver, which finds a generated workload referencing the path, reruns
that case's generator and writes the tensor through the store. The store then checks the
sha256 against the file name: a generator whose output changed fails loudly rather than
silently replacing the recorded data.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from hf_eval import tensorfile
from hf_eval.errors import DataError
from hf_eval.repository import DatasetFiles, Located
from hf_eval.samples.cases import SampleCase, case_by_label, generate_case, load_cases
from hf_eval.schema import Definition, SafetensorsInput
from hf_eval.store import Expected, TensorStore

#: The first line ``samples build`` writes into a blob directory's ``.gitignore``. The
#: text is a format marker of the dataset's files (it names this module's old path), so it
#: never changes.
REGENERATED_MARK = "# regenerated on first use (hf_eval.samples.regenerate)"


def listed_as_regenerated(root: Path, relpath: str) -> bool:
    """Whether ``samples build`` left this tensor out of git, to be regenerated on first use.

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
    if receipt is None or receipt.value.provenance.kind != "generated":
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


class SampleRegenerator:
    """The store's resolver for generated samples' large tensors (reads the files only)."""

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
                    if receipt is None or receipt.value.provenance.kind != "generated":
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
