"""The audit: for each definition, workload and solution, a verdict and timings.

Steps per case (harness.md): materialise inputs (verified); compute the reference or read
it from the cache; call the candidate; compare every output under the task tolerance;
check every input is byte-identical afterwards; time eager calls (and the prepared
``launch`` when the module has ``prepare``); re-check the output after timing; write one
JSON line. Candidates are executed by an executor (:class:`InProcessExecutor` here); the
seam is :meth:`InProcessExecutor.judge`, which an isolating executor replaces.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hf_eval.acceptance import compare_outputs
from hf_eval.errors import DataError
from hf_eval.modules import Entry, compile_reference, load_entry, solution_hash, source_hash
from hf_eval.reference_cache import ReferenceCache, cache_key
from hf_eval.report import ReportWriter, environment, print_summary
from hf_eval.repository import Dataset, Located
from hf_eval.schema import Definition, Solution, TaskConfig
from hf_eval.schema import Timing as TimingConfig
from hf_eval.snapshot import InputSnapshot
from hf_eval.timing import time_calls

SUITES = ("sample", "first", "dev", "all")
#: CPU timing is for orientation only: one warm-up and three single-call trials.
CPU_TIMING = TimingConfig(warmup=1, iters=1, trials=3)


@dataclass
class AuditConfig:
    report: Path
    definitions: list[str] | None = None
    solutions: str = "preferred"  # "preferred", "all", or comma-separated names
    suite: str = "sample"
    uuids: list[str] = field(default_factory=list)
    device: str = "cpu"
    validation_only: bool = False
    reference_cache: bool = True


def hardware_key(device: torch.device) -> str:
    """The ``preferred`` key of a task for this device: "cpu", or the GPU's short name."""
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device).lower()
    return next((k for k in ("h200", "h100", "b200", "b300") if k in name), "cuda")


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
    if how == "all":
        return dataset.solutions_for(definition)
    if how == "preferred":
        pick = task.preferred.get(hardware_key(device)) or task.preferred.get("cpu")
        name = pick.solution if pick else task.baseline.solution
        return [dataset.solution(name)]
    names = [n.strip() for n in how.split(",") if n.strip()]
    return [dataset.solution(n) for n in names if dataset.solution(n).definition == definition]


class InProcessExecutor:
    """Runs candidates in the audit's own process (no isolation; the seam for it)."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry | Exception] = {}

    def entry(self, solution: Solution) -> Entry:
        key = solution_hash(solution)
        if key not in self._entries:
            try:
                self._entries[key] = load_entry(solution)
            except Exception as exc:  # a solution that does not import is a COMPILE_ERROR
                self._entries[key] = exc
        found = self._entries[key]
        if isinstance(found, Exception):
            raise found
        return found

    def judge(self, solution: Solution, definition: Definition, task: TaskConfig,
              inputs: list[object], reference: tuple[torch.Tensor, ...], device: torch.device,
              timing: TimingConfig, validation_only: bool) -> dict:
        """Call, compare, byte-check and time one candidate on one workload."""
        try:
            entry = self.entry(solution)
        except Exception as exc:
            return {"status": "COMPILE_ERROR", "reason": _one_line(exc)}
        names = list(definition.outputs)
        snapshot = InputSnapshot(list(definition.inputs), inputs)

        def judge_outputs(produced: object, when: str) -> dict:
            """The case result for these outputs: PASSED, or the first failure."""
            verdicts = compare_outputs(names, produced, reference, task.tolerance_for)
            result = {"status": "PASSED", "outputs": [v.to_json() for v in verdicts]}
            failed = [v for v in verdicts if not v.passed]
            changed = snapshot.changed(inputs)
            if failed:
                result.update(status=failed[0].status, reason=f"{when}: {failed[0].name}: "
                              f"{failed[0].reason}")
                if changed:
                    result["reason"] += f"; input(s) modified: {', '.join(changed)}"
            elif changed:
                result.update(status="INCORRECT_NUMERICAL",
                              reason=f"{when}: input(s) modified: {', '.join(changed)}")
            return result

        try:
            produced = entry.run(*inputs)
            _sync(device)
        except Exception as exc:
            return {"status": "RUNTIME_ERROR", "reason": _one_line(exc),
                    "traceback": traceback.format_exc(limit=-5)}
        result = judge_outputs(produced, "first call")
        del produced
        if result["status"] != "PASSED" or validation_only:
            return result
        timings = {}
        try:
            call = lambda: entry.run(*inputs)  # noqa: E731
            timings["eager"] = _timed(call, device, timing)
            if entry.prepare is not None:
                launch = entry.prepare(*inputs)
                failure = judge_outputs(launch(), "prepared launch")
                if failure["status"] != "PASSED":
                    return failure
                timings["prepared"] = _timed(launch, device, timing)
            failure = judge_outputs(call(), "after timing")
            if failure["status"] != "PASSED":
                return failure
        except Exception as exc:
            return {"status": "RUNTIME_ERROR", "reason": f"while timing: {_one_line(exc)}"}
        result["timing"] = timings
        return result


def _timed(fn: Callable[[], object], device: torch.device, timing: TimingConfig) -> dict:
    return time_calls(fn, device=device, warmup=timing.warmup, iters=timing.iters,
                      trials=timing.trials).to_json()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Audit:
    def __init__(self, dataset: Dataset, config: AuditConfig, executor=None,
                 console: Console | None = None) -> None:
        self.dataset = dataset
        self.config = config
        self.device = torch.device(config.device)
        self.executor = executor or InProcessExecutor()
        self.references = ReferenceCache(enabled=config.reference_cache)
        self.console = console or Console(stderr=True)
        self.records: list[dict] = []

    def plan(self) -> list[tuple[Definition, TaskConfig, list[Solution], list[Located]]]:
        names = self.config.definitions or sorted(self.dataset.definitions)
        plan = []
        for name in names:
            definition = self.dataset.definition(name)
            task = self.dataset.task(name)
            solutions = select_solutions(self.dataset, task, name, self.config.solutions,
                                         self.device)
            rows = select_workloads(self.dataset, task, name, self.config.suite,
                                    self.config.uuids)
            if solutions and rows:
                plan.append((definition, task, solutions, rows))
        return plan

    def reference_outputs(self, definition: Definition, row: Located,
                          inputs: list[object]) -> tuple[tuple[torch.Tensor, ...], str, float]:
        key = cache_key(definition, row.value, self.device)
        cached = self.references.get(definition, key, self.device)
        if cached is not None:
            return cached, "cache", 0.0
        snapshot = InputSnapshot(list(definition.inputs), inputs)
        t0 = time.perf_counter()
        with torch.no_grad():
            out = compile_reference(definition)(*inputs)
        seconds = time.perf_counter() - t0
        outputs = out if isinstance(out, tuple) else (out,)
        if snapshot.changed(inputs):
            raise DataError(self.dataset.where(row), "the reference modified its inputs "
                            f"({', '.join(snapshot.changed(inputs))})")
        self.references.put(definition, key, outputs)
        return outputs, "computed", seconds

    def run(self) -> int:
        plan = self.plan()
        total = sum(len(s) * len(r) for _, _, s, r in plan)
        env = environment(self.device)
        writer = ReportWriter(self.config.report)
        failures = 0
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=self.console, transient=False)
        with progress:
            bar = progress.add_task("audit", total=total)
            for definition, task, solutions, rows in plan:
                timing = task.timing if self.device.type == "cuda" else CPU_TIMING
                task_path = self.dataset.tasks[definition.name].path
                for row in rows:
                    progress.update(bar, description=f"{definition.name[:40]:40}")
                    base = {"definition": definition.name, "workload": row.value.workload.uuid,
                            "axes": row.value.workload.axes, "device": str(self.device),
                            "environment": env,
                            "hashes": {"definition": source_hash(
                                self.dataset.definitions[definition.name].path.read_text()),
                                "task": source_hash(task_path.read_text())}}
                    try:
                        inputs = self.dataset.materialise_inputs(definition, row, self.device)
                        reference, ref_source, ref_seconds = self.reference_outputs(
                            definition, row, inputs)
                    except DataError as err:
                        for solution in solutions:
                            self._emit(writer, {**base, "solution": solution.name,
                                                "status": "DATA_ERROR", "reason": str(err)})
                            failures += 1
                            progress.advance(bar)
                        continue
                    for solution in solutions:
                        t0 = time.perf_counter()
                        result = self.executor.judge(solution, definition, task, inputs,
                                                     reference, self.device, timing,
                                                     self.config.validation_only)
                        record = {**base, "solution": solution.name,
                                  "reference": {"source": ref_source,
                                                "seconds": round(ref_seconds, 4)},
                                  "wall_seconds": round(time.perf_counter() - t0, 4), **result}
                        record["hashes"] = {**base["hashes"], "solution": solution_hash(solution)}
                        self._emit(writer, record)
                        progress.advance(bar)
                        if record["status"] != "PASSED":
                            failures += 1
                            # A failed candidate may have modified the inputs: reload them
                            # so the next solution sees the workload's real bytes.
                            inputs = self.dataset.materialise_inputs(definition, row,
                                                                     self.device)
                    del inputs, reference
        writer.close()
        print_summary(self.records, Console())
        Console().print(f"report: {self.config.report}  cases: {len(self.records)}  "
                        f"failed: {failures}")
        return 1 if failures or not self.records else 0

    def _emit(self, writer: ReportWriter, record: dict) -> None:
        writer.write(record)
        self.records.append(record)
