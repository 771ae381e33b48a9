"""Replay: judge each workload's recorded engine output against the definition's reference.

This is how a capture is validated (the published dataset checked its captures this way):
the engine's own output, saved at capture time in the receipt's ``expected_output``, must
agree with what the definition's reference computes from the saved inputs, under the
task's tolerance. A failure means the adapter, the definition or the engine is wrong, and
is reported; each result is written into the workload's receipt (``validation.replay``)
with the reference's hash, the tolerance and the torch version, so the dataset records
how it was validated. Only that key of the receipt's line changes; every other line of
``captures.jsonl`` is written back as it was read.

Receipts without an ``expected_output`` (imported workloads, which are checked against
the reference instead, and generated samples) are counted and reported as such, never
silently passed; a replay that finds nothing to replay says so and is an error of the
input (:attr:`ReplayResult.exit_code`).
"""

from __future__ import annotations

import fcntl
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import dumps_like
from hf_eval.data.sources import compile_reference, source_hash
from hf_eval.dataset import open_dataset
from hf_eval.judge.acceptance import compare_outputs
from hf_eval.judge.records import Status


@dataclass
class ReplayResult:
    """Every replayed workload's record, and the selected workloads that had nothing to
    replay, by definition."""

    results: list[dict] = field(default_factory=list)
    """One record per replayed workload: ``definition``, ``uuid``, ``status`` (``PASSED``,
    ``FAILED`` or ``DATA_ERROR``), ``outputs`` (each output's verdict, when compared) and
    ``reason`` (when it did not pass)."""
    no_expected_output: Counter = field(default_factory=Counter)
    """Workloads whose receipt has no ``expected_output``, by definition."""
    no_receipt: Counter = field(default_factory=Counter)
    """Workloads with no receipt at all, by definition."""
    not_recorded: list[str] = field(default_factory=list)
    """UUIDs of receipts whose ``validation`` is not an object (the replay is not written
    in)."""
    problems: list[str] = field(default_factory=list)
    """The lines of ``captures.jsonl`` that do not load (their workloads have no receipt)."""

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.results if r["status"] != Status.PASSED.value]

    @property
    def selected(self) -> int:
        return (len(self.results) + sum(self.no_expected_output.values())
                + sum(self.no_receipt.values()))

    @property
    def exit_code(self) -> int:
        """1: an engine output failed; 2: a ``DATA_ERROR``, a receipt that does not load,
        or nothing could be replayed (the selection matched no workload, or none of it
        has an engine output); else 0."""
        if any(r["status"] == "FAILED" for r in self.results):
            return 1
        if self.failures or self.problems or not self.results:
            return 2
        return 0

    def lines(self) -> list[str]:
        out = list(self.problems)
        out += [f"{r['definition']} {r['uuid']}: {r['status']}"
               + (f" ({r['reason']})" if r.get("reason") else "") for r in self.results]
        out += [f"{name}: {n} receipt(s) have no expected_output (no engine output to replay; "
                "judged against the reference only)"
                for name, n in sorted(self.no_expected_output.items())]
        out += [f"{name}: {n} workload(s) have no receipt in captures.jsonl"
                for name, n in sorted(self.no_receipt.items())]
        out += [f"{uuid}: validation is not an object; the replay was not recorded"
                for uuid in self.not_recorded]
        none = sum(self.no_expected_output.values()) + sum(self.no_receipt.values())
        out.append(f"replay: {len(self.results)} replayed, {len(self.failures)} failed, "
                   f"{none} without an engine output")
        if not self.selected:
            out.append("replay: nothing to replay: the selection matches no workload")
        elif not self.results:
            out.append(f"replay: nothing to replay: none of the {self.selected} selected "
                       "workload(s) has an engine output (expected_output)")
        return out


def replay(root: str | Path, definitions: list[str] | None = None,
           uuids: list[str] | None = None, device: str = "cpu",
           write: bool = True, data_root: str | Path | None = None) -> ReplayResult:
    """Replay every selected workload whose receipt has an engine output; record results.

    ``data_root``: the tensors are read there, under the same relative paths
    (:func:`hf_eval.dataset.open_dataset`)."""
    dataset = open_dataset(root, data_root=data_root)
    names = definitions or sorted(dataset.workloads)
    result = ReplayResult(problems=[str(p) for p in dataset.problems
                                    if p.file == "captures.jsonl"])
    updated: dict[str, Any] = {}
    dev = torch.device(device)
    for name in names:
        definition = dataset.definition(name)
        task = dataset.task(name)
        reference = compile_reference(definition)
        outputs = list(definition.outputs)
        for row in dataset.workloads.get(name, []):
            uuid = row.value.workload.uuid
            if uuids and uuid not in uuids:
                continue
            located = dataset.receipts.get(uuid)
            if located is None:
                result.no_receipt[name] += 1
                continue
            if located.value.expected_output is None:
                result.no_expected_output[name] += 1
                continue
            record = {"definition": name, "uuid": uuid}
            try:
                descriptors = dataset.engine_outputs(located)
                inputs = dataset.materialise_inputs(definition, row, dev)
                expected = tuple(dataset.store.load(descriptors[o], dev) for o in outputs)
                with torch.no_grad():
                    truth = reference(*inputs)
                truth = truth if isinstance(truth, tuple) else (truth,)
            except DataError as err:
                record.update(status=Status.DATA_ERROR.value, reason=str(err))
                result.results.append(record)
                continue
            verdicts = compare_outputs(outputs, expected, truth, task.tolerance_for)
            failed = [v for v in verdicts if not v.passed]
            record.update(status="FAILED" if failed else Status.PASSED.value,
                          outputs=[v.to_json() for v in verdicts])
            if failed:
                record["reason"] = f"{failed[0].name}: {failed[0].reason}"
            result.results.append(record)
            validation = located.value.validation
            if validation is not None and not isinstance(validation, dict):
                result.not_recorded.append(uuid)
                continue
            updated[uuid] = {**(validation or {}), "replay": {
                "status": record["status"], "outputs": record["outputs"],
                "reference_sha256": source_hash(definition.reference),
                "tolerance": {o: task.tolerance_for(o).model_dump() for o in outputs},
                "torch": torch.__version__, "device": str(dev),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}}
    if write and updated:
        rewrite_receipts(Path(root) / "captures.jsonl", {u: {"validation": v}
                                                         for u, v in updated.items()})
    return result


def rewrite_receipts(path: Path, changes: dict[str, dict[str, Any]]) -> None:
    """Set top-level keys of some receipts (``changes``: by UUID, key to new value).

    Locked, since a capture may append meanwhile. A changed line keeps its keys' order
    and its JSON style; every other line is written back byte for byte.
    """
    with open(path, "r+", encoding="utf-8", newline="") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        out = []
        for raw in fh.read().splitlines(keepends=True):
            line = raw.rstrip("\r\n")
            if line.strip():
                data = json.loads(line)
                if isinstance(data, dict) and data.get("uuid") in changes:
                    raw = dumps_like({**data, **changes[data["uuid"]]}, line) + raw[len(line):]
            out.append(raw)
        fh.seek(0)
        fh.truncate()
        fh.write("".join(out))
