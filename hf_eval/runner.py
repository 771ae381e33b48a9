"""The audit: for each definition, workload and solution, a verdict and timings.

Per case (harness.md): materialise inputs (verified) and share them with the candidate's
worker process; compute the reference in this process (or read it from the cache); call
the candidate; judge every output under the task tolerance; byte-check every input; time
eager calls, the prepared ``launch`` and CUDA-graph replays, re-judging the outputs each
method produced; write the second input set into the same buffers and judge again; write
one JSON line. The candidate runs in a spawned worker (:mod:`hf_eval.executor`), so a
crash, hang or patched timer costs that case only.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hf_eval.acceptance import compare_outputs
from hf_eval.errors import DataError
from hf_eval.executor import Isolation, WorkerFailure, gpu_lock
from hf_eval.modules import compile_reference, solution_hash, source_hash
from hf_eval.reference_cache import ReferenceCache, cache_key
from hf_eval.report import ReportWriter, environment, print_summary, read_report
from hf_eval.repository import Dataset, Located
from hf_eval.schema import Definition, Solution, TaskConfig
from hf_eval.schema import Timing as TimingConfig
from hf_eval.snapshot import InputSnapshot
from hf_eval.variants import InPlace, scale_probe, second_input_set

SUITES = ("sample", "first", "dev", "all")
#: CPU timing is for orientation only: one warm-up and three single-call trials.
CPU_TIMING = TimingConfig(warmup=1, iters=1, trials=3)
#: A timing request may take this many times the task's per-call timeout.
TIMING_TIMEOUT_FACTOR = 3


@dataclass
class AuditConfig:
    report: Path
    definitions: list[str] | None = None
    solutions: str = "preferred"  # "preferred", "all", or comma-separated names
    extra_solutions: list[Solution] = field(default_factory=list)  # e.g. --candidate
    suite: str = "sample"
    uuids: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    validation_only: bool = False
    reference_cache: bool = True
    resume: bool = False
    cold_l2: bool = False
    strict_diagnostic: bool = False
    scale_probe: bool = False


def hardware_key(device: torch.device) -> str:
    """The ``preferred`` key of a task for this device: "cpu", or the GPU's short name."""
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device).lower()
    return next((k for k in ("h200", "h100", "b200", "b300") if k in name), "cuda")


def runs_on(solution: Solution, device: torch.device) -> bool:
    """Whether a solution declares hardware of this kind ("cpu"; "cuda" or a GPU name)."""
    targets = [t.lower() for t in solution.spec.target_hardware]
    if "local" in targets:
        return True
    if device.type == "cpu":
        return "cpu" in targets
    return any(t != "cpu" for t in targets)


def select_workloads(dataset: Dataset, task: TaskConfig, definition: str, suite: str,
                     uuids: list[str]) -> list[Located]:
    rows = dataset.workloads.get(definition, [])
    if uuids:
        return [r for r in rows if r.value.workload.uuid in uuids]
    if suite == "first":
        return rows[:1]
    if suite == "dev":
        return [r for r in rows if r.value.workload.uuid in task.dev]
    if suite == "sample":
        def generated(row: Located) -> bool:
            receipt = dataset.receipts.get(row.value.workload.uuid)
            return receipt is not None and receipt.value.provenance.kind == "generated"
        return [r for r in rows if generated(r)]
    return rows


def select_solutions(dataset: Dataset, task: TaskConfig, definition: str, how: str,
                     device: torch.device) -> list[Solution]:
    if how == "none":
        return []
    if how == "all":
        return [s for s in dataset.solutions_for(definition) if runs_on(s, device)]
    if how == "preferred":
        pick = task.preferred.get(hardware_key(device)) or task.preferred.get("cpu")
        name = pick.solution if pick else task.baseline.solution
        return [dataset.solution(name)]
    names = [n.strip() for n in how.split(",") if n.strip()]
    return [dataset.solution(n) for n in names if dataset.solution(n).definition == definition]


@dataclass
class Case:
    """Everything the parent holds for one workload: inputs and the truth for each set."""

    definition: Definition
    task: TaskConfig
    row: Located
    inputs: list[object]
    reference: tuple[torch.Tensor, ...]
    second: list[object]
    second_reference: tuple[torch.Tensor, ...]
    snapshot: InputSnapshot | None = None  # of ``inputs``, valid while nothing changed
    probe: list[object] | None = None
    probe_reference: tuple[torch.Tensor, ...] | None = None
    reference_source: str = "computed"
    reference_seconds: float = 0.0


class Lane:
    """One device and its candidate worker; audits whole workloads one at a time."""

    def __init__(self, audit: Audit, device: torch.device) -> None:
        self.audit = audit
        self.device = device
        self.isolation = Isolation()
        self.definition: str | None = None  # workers are kept per definition

    # ------------------------------------------------------------------ the truth
    def reference(self, definition: Definition, row: Located, inputs: list[object],
                  tag: str, snapshot: InputSnapshot | None = None
                  ) -> tuple[tuple[torch.Tensor, ...], str, float]:
        cache = self.audit.references
        key = cache_key(definition, row.value, self.device) + f"-{tag}"
        cached = cache.get(definition, key, self.device)
        if cached is not None:
            return cached, "cache", 0.0
        snapshot = snapshot or InputSnapshot(list(definition.inputs), inputs)
        t0 = time.perf_counter()
        with torch.no_grad():
            out = compile_reference(definition)(*inputs)
        seconds = time.perf_counter() - t0
        outputs = out if isinstance(out, tuple) else (out,)
        changed = snapshot.changed(inputs)
        if changed:
            raise DataError(self.audit.dataset.where(row),
                            f"the reference modified its inputs ({', '.join(changed)})")
        cache.put(definition, key, outputs)
        return outputs, "computed", seconds

    def prepare_case(self, definition: Definition, task: TaskConfig, row: Located) -> Case:
        inputs = self.audit.dataset.materialise_inputs(definition, row, self.device, shared=True)
        snapshot = InputSnapshot(list(definition.inputs), inputs)
        reference, source, seconds = self.reference(definition, row, inputs, "main", snapshot)
        second = second_input_set(definition, inputs, row.value.workload.uuid)
        second_reference, _, _ = self.reference(definition, row, second, "second")
        case = Case(definition, task, row, inputs, reference, second, second_reference,
                    snapshot=snapshot, reference_source=source, reference_seconds=seconds)
        if self.audit.config.scale_probe:
            case.probe = scale_probe(definition, inputs)
            if case.probe is not None:
                case.probe_reference = self.reference(definition, row, case.probe, "probe")[0]
        return case

    # ------------------------------------------------------------------ judging
    def judge(self, solution: Solution, case: Case) -> dict:
        """The verdict on one solution for one case (never raises for candidate faults)."""
        timeout = case.task.call_timeout_s
        try:
            handle, loaded = self.isolation.worker(solution, timeout)
            if loaded["status"] != "OK":
                return {k: loaded[k] for k in ("status", "reason") if k in loaded}
            return self._judge(handle, case, timeout)
        except WorkerFailure as failure:
            self.isolation.discard(solution_hash(solution))
            return {"status": failure.status, "reason": str(failure)}

    def _request(self, handle, message: dict, timeout: float) -> dict:
        reply = handle.request({**message, "device": str(self.device)}, timeout)
        if reply.get("fatal"):
            self.isolation.discard(handle.solution_key)
        return reply

    def _verdict(self, case: Case, outputs: list[dict], reference: tuple[torch.Tensor, ...],
                 changed: list[str], when: str) -> dict:
        names = list(case.definition.outputs)
        tensors = []
        for out, ref in zip(outputs, reference):
            if torch.device(out["device"]) != ref.device:
                return {"status": "INCORRECT_SHAPE", "reason": f"{when}: output on "
                        f"{out['device']}, the reference is on {ref.device}"}
            tensors.append(out["tensor"].to(ref.device))
        verdicts = compare_outputs(names, tuple(tensors), reference, case.task.tolerance_for)
        result = {"status": "PASSED", "outputs": [v.to_json() for v in verdicts]}
        failed = [v for v in verdicts if not v.passed]
        if failed:
            result.update(status=failed[0].status,
                          reason=f"{when}: {failed[0].name}: {failed[0].reason}")
        if changed:
            if not failed:
                result["status"] = "INCORRECT_NUMERICAL"
            result["reason"] = (result.get("reason", "") + ("; " if failed else "")
                                + f"{when}: input(s) modified: {', '.join(changed)}")
        if self.audit.config.strict_diagnostic and case.task.diagnostic_tolerance:
            strict = compare_outputs(names, tuple(tensors), reference,
                                     lambda _: case.task.diagnostic_tolerance)
            result["diagnostic"] = [v.to_json() for v in strict]
        return result

    def _call(self, handle, case: Case, inputs: list[object], snapshot: InputSnapshot,
              reference, when: str, timeout: float, new_case: bool = False) -> dict:
        reply = self._request(handle, {"op": "call", "inputs": inputs, "when": when,
                                       "n_outputs": len(case.definition.outputs),
                                       "new_case": new_case}, timeout)
        if reply["status"] != "OK":
            return {k: reply[k] for k in ("status", "reason") if k in reply}
        return self._verdict(case, reply["outputs"], reference, snapshot.changed(inputs), when)

    def _judge(self, handle, case: Case, timeout: float) -> dict:
        config = self.audit.config
        snapshot = case.snapshot
        result = self._call(handle, case, case.inputs, snapshot, case.reference, "first call",
                            timeout, new_case=True)
        if result["status"] != "PASSED":
            return result
        if not config.validation_only:
            timing = case.task.timing if self.device.type == "cuda" else CPU_TIMING
            with gpu_lock(self.device):
                reply = self._request(handle, {
                    "op": "time", "inputs": case.inputs, "timing": timing.model_dump(),
                    "n_outputs": len(case.definition.outputs), "cold_l2": config.cold_l2},
                    timeout * TIMING_TIMEOUT_FACTOR)
            if reply["status"] != "OK":
                return {k: reply[k] for k in ("status", "reason") if k in reply}
            changed = snapshot.changed(case.inputs)
            for method, outputs in reply["outputs"].items():
                after = self._verdict(case, outputs, case.reference, changed,
                                      f"after {method} timing")
                if after["status"] != "PASSED":
                    return after
            result["timing"] = reply["timing"]
            graph = reply["timing"].get("graph", {})
            if "error" in graph:
                result["graph_capture_error"] = graph["error"]
        # The second input set goes into the same buffers: pointer-keyed caches fail here.
        swap = InPlace(case.inputs, case.second)
        try:
            snapshot.retake(case.inputs, [i for i, _ in swap.saved])
            second = self._call(handle, case, case.inputs, snapshot, case.second_reference,
                                "second input set", timeout)
        finally:
            swap.restore()
            snapshot.retake(case.inputs, [i for i, _ in swap.restored])
        result["second_input_set"] = {"status": second["status"], "changed": swap.changed}
        if second["status"] != "PASSED":
            return {**result, "status": second["status"], "reason": second.get("reason", "")}
        if case.probe is not None:
            probe = self._call(handle, case, case.probe, snapshot, case.probe_reference,
                               "scale probe", timeout)
            result["scale_probe"] = {k: probe.get(k) for k in ("status", "reason")}
            if probe["status"] != "PASSED":
                return {**result, "status": probe["status"], "reason": probe.get("reason", "")}
        return result

    def close(self) -> None:
        self.isolation.shutdown()


class Audit:
    def __init__(self, dataset: Dataset, config: AuditConfig,
                 console: Console | None = None) -> None:
        self.dataset = dataset
        self.config = config
        self.devices = [torch.device(d) for d in config.devices]
        self.references = ReferenceCache(enabled=config.reference_cache)
        self.console = console or Console(stderr=True)
        self.records: list[dict] = []
        self._lock = threading.Lock()

    def plan(self) -> list[tuple[Definition, TaskConfig, list[Solution], Located]]:
        """(definition, task, solutions, workload) units, in a stable order."""
        names = self.config.definitions or sorted(self.dataset.definitions)
        units = []
        for name in names:
            definition = self.dataset.definition(name)
            task = self.dataset.task(name)
            solutions = select_solutions(self.dataset, task, name, self.config.solutions,
                                         self.devices[0])
            solutions += [s for s in self.config.extra_solutions if s.definition == name]
            if self.config.solutions == "all":
                skipped = sorted(s.name for s in self.dataset.solutions_for(name)
                                 if not runs_on(s, self.devices[0]))
                if skipped:
                    self.console.print(f"{name}: not auditing {', '.join(skipped)} "
                                       f"(target_hardware excludes {self.devices[0].type})")
            for row in select_workloads(self.dataset, task, name, self.config.suite,
                                        self.config.uuids):
                if solutions:
                    units.append((definition, task, solutions, row))
        return units

    def _done(self) -> set[tuple[str, str, str]]:
        if not (self.config.resume and Path(self.config.report).is_file()):
            return set()
        records = read_report(self.config.report)
        self.records.extend(records)
        return {(r["definition"], r["workload"], r["hashes"]["solution"]) for r in records
                if "hashes" in r and "solution" in r["hashes"]}

    def run(self) -> int:
        done = self._done()
        units = self.plan()
        total = sum(len(s) for _, _, s, _ in units)
        env = {str(d): environment(d) for d in self.devices}
        writer = ReportWriter(self.config.report, append=self.config.resume)
        work: queue.Queue = queue.Queue()
        for unit in units:
            work.put(unit)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=self.console)
        with progress:
            bar = progress.add_task("audit", total=total)

            def lane_main(device: torch.device) -> None:
                lane = Lane(self, device)
                try:
                    while True:
                        try:
                            unit = work.get_nowait()
                        except queue.Empty:
                            return
                        self._audit_unit(lane, unit, env[str(device)], done, writer,
                                         lambda d: progress.update(bar, description=d),
                                         lambda: progress.advance(bar))
                finally:
                    lane.close()

            threads = [threading.Thread(target=lane_main, args=(d,)) for d in self.devices]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        writer.close()
        print_summary(self.records, Console())
        failed = sum(r["status"] != "PASSED" for r in self.records)
        Console().print(f"report: {self.config.report}  cases: {len(self.records)}  "
                        f"failed: {failed}")
        return 1 if failed or not self.records else 0

    def _audit_unit(self, lane: Lane, unit, env: dict, done: set, writer: ReportWriter,
                    describe, advance) -> None:
        definition, task, solutions, row = unit
        uuid = row.value.workload.uuid
        todo = [s for s in solutions if (definition.name, uuid, solution_hash(s)) not in done]
        for _ in range(len(solutions) - len(todo)):
            advance()
        if not todo:
            return
        describe(f"{definition.name[:40]:40}")
        if lane.definition != definition.name:
            lane.isolation.shutdown()
            lane.definition = definition.name
        base = {"definition": definition.name, "workload": uuid, "axes": row.value.workload.axes,
                "device": str(lane.device), "environment": env,
                "baseline": task.baseline.solution, "baseline_timed": task.baseline.timed,
                "hashes": {"definition": source_hash(
                    self.dataset.definitions[definition.name].path.read_text()),
                    "task": source_hash(self.dataset.tasks[definition.name].path.read_text())}}
        try:
            case = lane.prepare_case(definition, task, row)
        except DataError as err:
            for solution in todo:
                self._emit(writer, {**base, "solution": solution.name, "status": "DATA_ERROR",
                                    "reason": str(err),
                                    "hashes": {**base["hashes"],
                                               "solution": solution_hash(solution)}})
                advance()
            return
        for solution in todo:
            t0 = time.perf_counter()
            result = lane.judge(solution, case)
            record = {**base, "solution": solution.name,
                      "reference": {"source": case.reference_source,
                                    "seconds": round(case.reference_seconds, 4)},
                      "wall_seconds": round(time.perf_counter() - t0, 4), **result,
                      "hashes": {**base["hashes"], "solution": solution_hash(solution)}}
            self._emit(writer, record)
            advance()
            if record["status"] != "PASSED":
                # A failed candidate may have modified the inputs: reload them so the next
                # solution sees the workload's real bytes.
                case.inputs = self.dataset.materialise_inputs(definition, row, lane.device,
                                                              shared=True)
                case.snapshot = InputSnapshot(list(definition.inputs), case.inputs)

    def _emit(self, writer: ReportWriter, record: dict) -> None:
        with self._lock:
            writer.write(record)
            self.records.append(record)
