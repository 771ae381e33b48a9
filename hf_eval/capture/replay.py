"""Replay: judge each workload's recorded expected output against the definition's reference.

This is how a capture is validated (the published dataset checked its captures this way):
the engine's own output, saved at capture time, must agree with what the definition's
reference computes from the saved inputs, under the task's tolerance. A failure means
the adapter, the definition or the engine is wrong, and is reported; each result is
written into the workload's receipt (``validation.replay``) with the reference's hash,
the tolerance and the torch version, so the dataset records how it was validated.

Workloads whose receipts hold no expected output (generated samples) are counted and
reported as such, never silently passed.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from hf_eval.acceptance import compare_outputs
from hf_eval.dataset import open_dataset
from hf_eval.errors import DataError
from hf_eval.schema import Receipt
from hf_eval.sources import compile_reference, source_hash


@dataclass
class ReplayResult:
    results: list[dict] = field(default_factory=list)
    no_expected_output: Counter = field(default_factory=Counter)

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.results if r["status"] != "PASSED"]

    def lines(self) -> list[str]:
        out = [f"{r['definition']} {r['uuid']}: {r['status']}"
               + (f" ({r['reason']})" if r.get("reason") else "") for r in self.results]
        out += [f"{name}: {n} workload(s) have no expected output to replay (not captured)"
                for name, n in sorted(self.no_expected_output.items())]
        out.append(f"replay: {len(self.results)} replayed, {len(self.failures)} failed")
        return out


def replay(root: str | Path, definitions: list[str] | None = None,
           uuids: list[str] | None = None, device: str = "cpu",
           write: bool = True) -> ReplayResult:
    """Replay every selected workload that has an expected output; record results."""
    dataset = open_dataset(root)
    names = definitions or sorted(dataset.workloads)
    result = ReplayResult()
    updated: dict[str, Receipt] = {}
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
            if located is None or located.value.expected_output is None:
                result.no_expected_output[name] += 1
                continue
            receipt: Receipt = located.value
            record = {"definition": name, "uuid": uuid}
            try:
                inputs = dataset.materialise_inputs(definition, row, dev)
                descriptors = dataset.engine_outputs(located)
                expected = tuple(dataset.store.load(descriptors[o], dev) for o in outputs)
                with torch.no_grad():
                    truth = reference(*inputs)
                truth = truth if isinstance(truth, tuple) else (truth,)
            except DataError as err:
                record.update(status="DATA_ERROR", reason=str(err))
                result.results.append(record)
                continue
            verdicts = compare_outputs(outputs, expected, truth, task.tolerance_for)
            failed = [v for v in verdicts if not v.passed]
            record.update(status="FAILED" if failed else "PASSED",
                          outputs=[v.to_json() for v in verdicts])
            if failed:
                record["reason"] = f"{failed[0].name}: {failed[0].reason}"
            result.results.append(record)
            validation = dict(receipt.validation or {})
            validation["replay"] = {
                "status": record["status"], "outputs": record["outputs"],
                "reference_sha256": source_hash(definition.reference),
                "tolerance": {o: task.tolerance_for(o).model_dump() for o in outputs},
                "torch": torch.__version__, "device": str(dev),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            updated[uuid] = receipt.model_copy(update={"validation": validation})
    if write and updated:
        rewrite_receipts(Path(root) / "captures.jsonl", updated)
    return result


def rewrite_receipts(path: Path, updated: dict[str, Receipt]) -> None:
    """Replace the lines of ``updated`` receipts in place (locked: captures may append)."""
    with open(path, "r+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        lines = fh.read().splitlines()
        out = []
        for line in lines:
            if line.strip():
                uuid = json.loads(line).get("uuid")
                if uuid in updated:
                    line = updated[uuid].to_line(like=line)
            out.append(line)
        fh.seek(0)
        fh.truncate()
        fh.write("".join(line + "\n" for line in out))
