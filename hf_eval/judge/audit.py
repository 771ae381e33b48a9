"""The audit: for each definition, workload and solution, a verdict and timings.

Per case (harness.md): materialise inputs (verified) into sealed memfds only the audit can
write; compute the reference in this process (or read it from the cache, which the worker
cannot read); then one :class:`~hf_eval.judge.trials.Session` per solution calls, checks
and times the candidate in its contained worker (:mod:`hf_eval.isolation`), so a crash,
hang or cheat costs that case only; write one JSON line per case as it completes.

Every status in a record is the audit's: PASSED from its own comparison, DATA_ERROR from
its own data checks (a workload that does not load, a reference that raises), and any
failure the worker reports, or any exception while the audit receives, seals, checks or
compares a candidate's output, a candidate failure of that case alone.
"""

from __future__ import annotations

import hashlib
import json
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from hf_eval.data import memory
from hf_eval.data.cache import ReferenceCache, cache_key
from hf_eval.data.errors import DataError
from hf_eval.data.repository import Located
from hf_eval.data.schema import Definition, Solution, TaskConfig
from hf_eval.data.sources import compile_reference, solution_hash, source_hash
from hf_eval.dataset import Dataset
from hf_eval.isolation import walls as sandbox
from hf_eval.isolation.protocol import Reply
from hf_eval.isolation.walls import SandboxError
from hf_eval.isolation.workers import Isolation, StandInFailed, WorkerFailure, gpu_lock
from hf_eval.judge.input_sets import InputSnapshot, scale_probe
from hf_eval.judge.records import CaseRecord, RecordError, Status, validate_record
from hf_eval.judge.report import ReportWriter, environment, read_report
from hf_eval.judge.trials import (
    CASE_BUDGET_FACTOR,
    CPU_TIMING,
    Failure,
    InputSet,
    ReferenceFailed,
    Session,
    SharedGpuBusy,
    session_failure,
)
from hf_eval.samples.fresh import FreshRow, FreshSource

#: The reference cache of rows whose truth must not be stored (fresh rows).
NO_CACHE = ReferenceCache(Path("/nonexistent"), enabled=False)


class AuditAborted(Exception):
    """The harness itself failed (a full disk, a bug): the audit stops without a verdict on
    the cases left; the report keeps every case judged before (``--resume`` continues)."""


@dataclass
class AuditConfig:
    report: Path
    """The JSONL report, one line per judged case (appended to when resuming); the
    skipped solutions are written beside it."""
    definitions: list[str] | None = None
    """The definitions to audit, by name, in this order; None: every definition of the
    dataset, sorted."""
    solutions: str = "preferred"
    """Which solutions to audit: "preferred" (the task's pick for this device's hardware,
    else its CPU pick, else its baseline), "all" (every solution of the definition),
    "none" (only ``extra_solutions``), or comma-separated names (a name of another
    definition is left out)."""
    extra_solutions: list[Solution] = field(default_factory=list)
    """Solutions audited besides those ``solutions`` selects, each on its own definition
    (e.g. ``--candidate``'s, loaded from a directory)."""
    suite: str = "sample"
    """Which workloads of each definition: "sample" (the generated ones), "dev" (the
    task's dev UUIDs), "first" (the first), "fresh" (drawn from the audit's secret), "all"
    (every one). This default is the library's; the command line defaults to
    ``DEFAULT_SUITE``."""
    uuids: list[str] = field(default_factory=list)
    """Workload UUIDs to audit instead of the suite's (``--uuid``); empty: the suite
    decides."""
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    """The devices to audit on, one lane each ("cpu", "cuda:0", ...); the first decides
    which solutions run there and which one is preferred."""
    validation_only: bool = False
    """Check correctness only: no timing trials (the second input set and the scale probe
    still run)."""
    reference_cache: bool = True
    """Whether references are read from and stored in the reference cache on disk (False:
    always computed, ``--no-reference-cache``); a fresh row's is never stored."""
    resume: bool = False
    """Continue the report: its cases (definition, workload, solution hash) are not
    audited again and new lines are appended; it must have been written with the same
    :meth:`Audit.flags`."""
    strict_diagnostic: bool = False
    """Also compare each judged call's outputs by the task's ``diagnostic_tolerance`` and
    report it in the record (``diagnostic``), never for acceptance."""
    scale_probe: bool = False
    """Also call each solution once with the ``scale`` scalars halved
    (:func:`~hf_eval.judge.input_sets.scale_probe`), judged against the reference of those
    inputs (the record's ``scale_probe``)."""


def hardware_key(device: torch.device) -> str:
    """The ``preferred`` key of a task for this device: "cpu", or the GPU's short name."""
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device).lower()
    return next((k for k in ("h200", "h100", "b200", "b300") if k in name), "cuda")


#: GPU short names (:func:`hardware_key`) of the Blackwell generation (sm_100/103).
BLACKWELL = ("b200", "b300")


def gpu_target(target: str) -> str | None:
    """The short GPU name a ``target_hardware`` entry names ("NVIDIA_B300", "NVIDIA H200"
    -> "b300", "h200"), or None for "cpu", "cuda", "local" and anything else."""
    words = target.lower().replace("_", " ").replace("-", " ").split()
    if words[:1] == ["nvidia"]:
        words = words[1:]
    name = "".join(words)
    return name if name in ("h100", "h200", "b200", "b300") else None


def skip_reason(solution: Solution, device_key: str) -> str | None:
    """Why ``solution`` is not run on a device of this :func:`hardware_key` ("cpu",
    "h200", "b300", ... or "cuda" for another GPU), or None when it runs there.

    "local" runs anywhere; "cpu" names the CPU; "cuda" names any GPU. A named GPU
    ("NVIDIA_B300", "NVIDIA H200") names that GPU only: a solution that names GPUs and
    not "cuda" runs on those, so a Blackwell-only one is skipped on the H200 and the CPU.
    """
    targets = [t.lower() for t in solution.spec.target_hardware]
    if "local" in targets:
        return None
    declared = ", ".join(solution.spec.target_hardware)
    named = {g for g in map(gpu_target, solution.spec.target_hardware) if g}
    if device_key == "cpu":
        if "cpu" in targets:
            return None
        if named and named <= set(BLACKWELL):
            return f"Blackwell-only (target_hardware {declared}); this device is the CPU"
        return "target_hardware excludes cpu"
    if "cuda" in targets or device_key in named:
        return None
    if not named:
        return f"target_hardware {declared} names no GPU"
    if named <= set(BLACKWELL):
        return f"Blackwell-only (target_hardware {declared}); this GPU is {device_key}"
    return f"target_hardware {declared} does not name this GPU ({device_key})"


@dataclass(frozen=True)
class SkippedSolution:
    """A solution the audit selected but did not run: its hardware is not this device's."""

    definition: str
    """The definition whose workloads it would have been audited on."""
    solution: str
    """The solution's name."""
    device: str
    """The device the audit ran on ("cpu", "cuda:0")."""
    reason: str
    """Why it was not run (its target_hardware against this device)."""
    status: str = "SKIPPED"
    """Always "SKIPPED": no case of this solution was judged on this device."""


def skipped_path(report: str | Path) -> Path:
    """Where an audit writes its skipped solutions: beside the report, ``.skipped.jsonl``."""
    report = Path(report)
    return report.with_name(report.stem + ".skipped.jsonl")


def write_skipped(report: str | Path, skipped: list[SkippedSolution]) -> None:
    """One JSON line per skipped solution beside the report (no file when none is)."""
    if skipped:
        path = skipped_path(report)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(asdict(k), sort_keys=True) + "\n"
                                for k in skipped))


def runs_on(solution: Solution, device: torch.device) -> bool:
    """Whether a solution declares hardware of this kind ("cpu"; "cuda" or a GPU name)."""
    return skip_reason(solution, hardware_key(device)) is None


def select_workloads(dataset: Dataset, task: TaskConfig, definition: str, suite: str,
                     uuids: list[str], fresh: FreshSource | None = None) -> list[Located]:
    """The rows of ``definition`` in ``suite`` (``uuids``, when given, select instead).

    ``fresh`` is the audit's source of fresh rows; the ``fresh`` suite needs it."""
    rows = dataset.workloads.get(definition, [])
    if uuids:
        return [r for r in rows if r.value.workload.uuid in uuids]
    if suite == "fresh":
        if fresh is None:
            raise DataError("--suite", "the fresh suite is drawn by an audit from its own "
                            "secret: there are no fresh workloads outside one")
        return list(fresh.rows(dataset, definition))
    if suite == "first":
        return rows[:1]
    if suite == "dev":
        known = {r.value.workload.uuid for r in rows}
        unknown = [u for u in task.dev if u not in known]
        if unknown:
            where = (dataset.where(dataset.tasks[definition]) if definition in dataset.tasks
                     else f"tasks/{definition}.json")
            raise DataError(where, f"dev UUID {unknown[0]} is not a workload of {definition}"
                            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""),
                            field="dev")
        outside = [u for u in task.dev if (receipt := dataset.receipts.get(u)) is not None
                   and receipt.value.outside_domain]
        if outside:
            where = (dataset.where(dataset.tasks[definition]) if definition in dataset.tasks
                     else f"tasks/{definition}.json")
            raise DataError(where, f"dev UUID {outside[0]} is outside the published domain: "
                            "a dev workload must lie inside it", field="dev")
        return [r for r in rows if r.value.workload.uuid in task.dev]
    if suite == "sample":
        def generated(row: Located) -> bool:
            receipt = dataset.receipts.get(row.value.workload.uuid)
            return receipt is not None and receipt.value.kind == "generated"
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
    """Everything the parent holds for one workload: inputs and the truth."""

    definition: Definition
    """The definition the workload belongs to."""
    task: TaskConfig
    """The definition's task: its call timeout, tolerances and timing."""
    row: Located
    """The workload row, with where it was read (a ``FreshRow`` in the fresh suite); None
    for a benchmark shape, which sets ``key`` instead."""
    inputs: list[object]
    """The workload's inputs, one per definition input: tensors in sealed memfds only the
    audit writes (workers map them read-only), scalars as they are."""
    reference: tuple[torch.Tensor, ...]
    """The reference outputs for ``inputs``, on the audit's device."""
    snapshot: InputSnapshot | None = None
    """A snapshot of ``inputs``, checked after every solution (inputs found changed are
    loaded again); None: not checked (the benchmark's cases)."""
    probe: list[object] | None = None
    """The scale probe's inputs; None when the probe is off or has nothing to vary."""
    probe_reference: tuple[torch.Tensor, ...] | None = None
    """The reference outputs for ``probe``, on the audit's device; None without a probe."""
    reference_source: str = "computed"
    """Where the reference came from, the record's ``reference.source``: "computed",
    "cache" (the reference cache on disk) or "memory" (a case the server kept)."""
    reference_seconds: float = 0.0
    """Seconds the reference took to compute; 0 when it was read from the cache or kept."""
    key: str = ""
    """Names the case's input set in the worker (the workload UUID, or a benchmark shape);
    empty: set to the workload UUID on creation."""

    def __post_init__(self) -> None:
        self.key = self.key or self.row.value.workload.uuid


class Lane:
    """One device and its candidate worker; audits whole workloads one at a time."""

    def __init__(self, audit: Audit, device: torch.device) -> None:
        self.audit = audit
        self.device = device
        self.isolation = Isolation(device)
        self.definition: str | None = None  # workers are kept per definition

    # ------------------------------------------------------------------ the truth
    def compute_reference(self, definition: Definition, inputs: list[object]
                          ) -> tuple[torch.Tensor, ...]:
        """The reference on this lane's device, from CPU inputs (which it must not change)."""
        on_device = [v.to(self.device) if isinstance(v, torch.Tensor) else v for v in inputs]
        with torch.no_grad():
            out = compile_reference(definition)(*on_device)
        return out if isinstance(out, tuple) else (out,)

    def _reference_or_room(self, definition: Definition, inputs: list[object]
                           ) -> tuple[torch.Tensor, ...]:
        """A case's truth. On CUDA, where it failed while a candidate's worker was kept
        alive (between the workloads of a definition) or was still ending, the lane's
        candidate workers are ended (those still ending are not waited for again) and the
        truth computed once more: the GPU's memory or state a kept candidate held (an
        allocation, a module that could not load: "out of memory" comes under several
        exception types) does not make the data fail."""
        try:
            return self.compute_reference(definition, inputs)
        except Exception:
            if self.device.type != "cuda" or not (self.isolation.workers
                                                   or self.isolation.dying):
                raise
        self.isolation.shutdown()  # each waited for at most END_TIMEOUT_S
        torch.cuda.empty_cache()
        return self.compute_reference(definition, inputs)

    def _truth_in_session(self, definition: Definition, inputs: list[object]
                          ) -> tuple[torch.Tensor, ...]:
        """A fresh set's truth, computed while the candidate's worker lives. On CUDA, a
        failure is tried once more with the audit's own cached memory given back; failing
        again, it is the data's (the caller's DATA_ERROR). The candidate's worker is not
        ended to see whether it was the cause: it holds the trial's own inputs, which the
        harness put there, so a truth that computes without it would not say whose memory
        was short ("What remains", "A worker's GPU memory")."""
        try:
            return self.compute_reference(definition, inputs)
        except Exception:
            if self.device.type != "cuda":
                raise
        torch.cuda.empty_cache()
        return self.compute_reference(definition, inputs)

    def reference(self, definition: Definition, row: Located, inputs: list[object],
                  tag: str, snapshot: InputSnapshot | None = None
                  ) -> tuple[tuple[torch.Tensor, ...], str, float]:
        # A fresh row's truth never goes to disk: its inputs exist only in this audit.
        cache = self.audit.references if not isinstance(row, FreshRow) else NO_CACHE
        key = cache_key(definition, row.value, self.device) + f"-{tag}"
        cached = cache.get(definition, key, self.device)
        if cached is not None:
            return cached, "cache", 0.0
        snapshot = snapshot or InputSnapshot(list(definition.inputs), inputs)
        with gpu_lock(self.device, self.audit._interrupted):  # no other audit's candidate
            t0 = time.perf_counter()
            try:
                outputs = self._reference_or_room(definition, inputs)
            except Exception as exc:  # noqa: BLE001 - the data's fault: the case's DATA_ERROR
                where = self.audit.dataset.where(
                    self.audit.dataset.definitions[definition.name])
                raise DataError(where, str(ReferenceFailed(exc))) from None
            seconds = time.perf_counter() - t0
        changed = snapshot.changed(inputs)
        if changed:
            raise DataError(self.audit.dataset.where(row),
                            f"the reference modified its inputs ({', '.join(changed)})")
        cache.put(definition, key, outputs)
        return outputs, "computed", seconds

    def prepare_case(self, definition: Definition, task: TaskConfig, row: Located) -> Case:
        inputs = self._sealed(self.audit.dataset.materialise_inputs(definition, row, "cpu",
                                                                    shared=True))
        snapshot = InputSnapshot(list(definition.inputs), inputs)
        reference, source, seconds = self.reference(definition, row, inputs, "main", snapshot)
        case = Case(definition, task, row, inputs, reference, snapshot=snapshot,
                    reference_source=source, reference_seconds=seconds)
        if self.audit.config.scale_probe:
            case.probe = scale_probe(definition, inputs)
            if case.probe is not None:
                case.probe_reference = self.reference(definition, row, case.probe, "probe")[0]
        return case

    @staticmethod
    def _sealed(inputs: list[object]) -> list[object]:
        """The inputs in sealed memfds: the audit's own, which workers map read-only (read
        there from the file; a tensor drawn in memory is copied once), lent to every
        worker of the case."""
        return [memory.lendable(v) if isinstance(v, torch.Tensor) else v for v in inputs]

    # ------------------------------------------------------------------ judging
    def _stand_in_failed(self, key: str, failure: StandInFailed) -> dict:
        """The stand-in could not start while this candidate's worker lived: try again
        with that worker ended. Started then, the candidate was the cause (it held some
        resource of the host, say its open-file table): its RUNTIME_ERROR. Failing again,
        the harness's own failure, which stops the audit."""
        self.isolation.discard(key, failed=True)
        self.isolation.stand_in()  # raises StandInFailed again: the harness's failure
        return {"status": Status.RUNTIME_ERROR.value,
                "reason": f"{failure} while this candidate's worker lived; it started "
                          "once that worker was ended"}

    def judge(self, solution: Solution, case: Case,
              reference: Callable[[list[object]], tuple[torch.Tensor, ...]] | None = None
              ) -> dict:
        """The verdict on one solution for one case (never raises for candidate faults).

        ``reference`` computes the truth of fresh input sets (default: the definition's
        reference on this lane's device)."""
        timeout = case.task.call_timeout_s
        key = solution_hash(solution)
        t_load = time.perf_counter()
        try:
            handle, loaded = self.isolation.worker(solution, timeout,
                                                   CASE_BUDGET_FACTOR * timeout)
        except WorkerFailure as failure:
            self.isolation.discard(key, failed=True)
            return {"status": failure.status.value, "reason": str(failure)}
        if loaded.error is not None:  # the candidate did not import: its failure
            self.isolation.discard(key, failed=True)
            return {"status": Status.COMPILE_ERROR.value, "reason": loaded.error,
                    **({"traceback": loaded.traceback} if loaded.traceback else {})}
        reload_s = self.isolation.reload_s
        main = InputSet(f"m-{case.key}", case.inputs, case.reference)
        strict = (case.task.diagnostic_tolerance
                  if self.audit.config.strict_diagnostic else None)
        session = None
        try:
            session = Session(handle, self.isolation.stand_in, case.definition, case.task,
                              self.device, main,
                              reference or (lambda inputs: self._truth_in_session(
                                  case.definition, inputs)),
                              self.audit.secret, timeout, strict, reload_s)
            session.setup_ms["load"] = round((time.perf_counter() - t_load) * 1e3, 3)
            result = self._judge(session, case, loaded)
            session.forget([main.id], graph=True)
        except ReferenceFailed as exc:  # the data's fault: the candidate is not judged
            self.isolation.discard(key)
            result = {"status": Status.DATA_ERROR.value, "reason": str(exc)}
        except (Failure, WorkerFailure) as exc:
            result = session_failure(exc)
            fatal = result.pop("fatal", False) or isinstance(exc, WorkerFailure)
            if not fatal and session is not None:
                try:  # the worker is fine; drop what it holds of this case
                    session.forget(list(session.registered), graph=True)
                except (Failure, WorkerFailure):
                    fatal = True
            if fatal:
                self.isolation.discard(key, failed=True)
        except StandInFailed as exc:
            result = self._stand_in_failed(key, exc)
        except (SandboxError, DataError, AuditAborted, SharedGpuBusy):
            raise  # the harness's own failure, the data's or the host's: not this candidate's
        except Exception as exc:  # noqa: BLE001 - a candidate never stops the audit
            self.isolation.discard(key, failed=True)
            result = {"status": Status.RUNTIME_ERROR.value,
                      "reason": f"the audit could not judge this candidate's output: "
                                f"{type(exc).__name__}: {str(exc)[:300]}"}
        if session is not None:
            session.release_stand_in()
            result["content"] = {"fresh_sets": session.distinct_sets,
                                 "undecided_rows": session.undecided_rows,
                                 "fresh_calls_judged": session.fresh_calls,
                                 "fresh_calls_allowed": session.fresh_allowed,
                                 "secret_sha256": self.audit.secret_digest}
        result["isolation"] = list(loaded.walls)
        return result

    def _judge(self, session: Session, case: Case, loaded: Reply) -> dict:
        """The steps of one verdict: the first call, timing (unless validation only), the
        second input set, the scale probe (when asked); a failure raises out of them. On
        CUDA all of them hold the GPU's lock: no other audit's session (its calls, its
        references) runs on the GPU while this one times, nor while its stand-in waits
        for the GPU to be free (work it found there is then its own candidate's)."""
        with gpu_lock(self.device, self.audit._interrupted):
            return self._judge_steps(session, case, loaded)

    def _judge_steps(self, session: Session, case: Case, loaded: Reply) -> dict:
        config = self.audit.config
        t0 = time.perf_counter()
        result = session.call([session.main], "first call")
        session.setup_ms["first_call"] = round((time.perf_counter() - t0) * 1e3, 3)
        if not config.validation_only and not session.content_varies():
            result["timing_refused"] = (
                "not timed: every input that fresh content varies is constant in this "
                "workload, so no timed call could get content of its own (a cache of "
                "the first answer would pass)")
        elif not config.validation_only:
            timings: dict = {}
            methods = ["eager"] + (["prepared"] if loaded.prepare else [])
            if self.device.type == "cuda":
                timings = session.time_graph(methods[-1], case.task.timing)
                if "error" in timings:  # eager calls instead, in both L2 states
                    result["graph_capture_error"] = timings.pop("error")
                    timings[methods[-1]] = session.time(methods[-1], case.task.timing)
                    timings["cold"] = session.time(methods[-1], case.task.timing,
                                                   cold=True)
            else:
                for method in methods:
                    timings[method] = session.time(
                        method, CPU_TIMING.timing(session.case_bytes()))
            result["timing"] = timings
            result["setup_ms"] = dict(session.setup_ms)
        result["second_input_set"] = session.second_input_set()
        if case.probe is not None:
            result["scale_probe"] = session.scale_probe(case.probe, case.probe_reference)
        return result

    def close(self) -> None:
        self.isolation.close()


class Audit:
    """The audit library: plans units, judges them, writes the report; prints nothing.

    :meth:`run` returns one :class:`~hf_eval.judge.records.CaseRecord` per case; the caller
    renders them and chooses an exit code (the CLI does both).
    """

    def __init__(self, dataset: Dataset, config: AuditConfig) -> None:
        self.dataset = dataset
        self.config = config
        sandbox.protect(dataset.root)  # unreadable to workers, however hf_eval is installed
        self.devices = [torch.device(d) for d in config.devices]
        self.references = ReferenceCache(enabled=config.reference_cache)
        self.records: list[dict] = []
        #: Things a reader should know that are not case records (solutions not audited).
        self.notes: list[str] = []
        #: Solutions the plan selected but does not run on this device, each with its reason.
        self.skipped: list[SkippedSolution] = []
        #: What the plan refused beyond the dataset's load problems (a dev UUID that names
        #: no workload, say): those definitions are not audited, and the exit code is 2.
        self.refused: list[DataError] = []
        #: Seeds every fresh input set of this audit; only its digest is reported.
        self.secret = secrets.token_bytes(32)
        self.secret_digest = hashlib.sha256(self.secret).hexdigest()
        #: The fresh suite's rows, drawn from the secret (built once per definition).
        self.fresh = FreshSource(self.secret)
        self._lock = threading.Lock()
        #: Set on Ctrl-C: the lanes stop, and no record is written after it.
        self._interrupted = threading.Event()

    def plan(self) -> list[tuple[Definition, TaskConfig, list[Solution], Located]]:
        """(definition, task, solutions, workload) units, in a stable order."""
        names = self.config.definitions or sorted(self.dataset.definitions)
        units = []
        self.notes, self.refused, self.skipped = [], [], []
        # A file with a load problem is refused whole (its problem is the CLI's error line);
        # the rest of the dataset is audited.
        refused_files = {problem.file for problem in self.dataset.problems}
        for name in names:
            try:
                definition = self.dataset.definition(name)
                task = self.dataset.task(name)
                solutions = select_solutions(self.dataset, task, name, self.config.solutions,
                                             self.devices[0])
                rows = select_workloads(self.dataset, task, name, self.config.suite,
                                        self.config.uuids, self.fresh)
            except DataError as err:
                if err.file not in refused_files:
                    self.refused.append(err)
                continue
            # A solution whose target_hardware excludes this device is not run: it gets a
            # SkippedSolution record with the reason (written beside the report) and a note.
            device_key = hardware_key(self.devices[0])
            considered = (self.dataset.solutions_for(name) if self.config.solutions == "all"
                          else solutions)
            for solution in sorted(considered, key=lambda s: s.name):
                reason = skip_reason(solution, device_key)
                if reason is not None:
                    self.skipped.append(SkippedSolution(name, solution.name,
                                                        str(self.devices[0]), reason))
            solutions = [s for s in solutions if skip_reason(s, device_key) is None]
            by_reason: dict[str, list[str]] = {}
            for k in self.skipped:
                if k.definition == name:
                    by_reason.setdefault(k.reason, []).append(k.solution)
            if by_reason:
                self.notes.append(f"{name}: not auditing " + "; ".join(
                    f"{', '.join(names)} ({reason})" for reason, names in by_reason.items()))
            solutions += [s for s in self.config.extra_solutions if s.definition == name]
            for row in rows:
                if solutions and self.dataset.where(row).split(":")[0] not in refused_files:
                    units.append((definition, task, solutions, row))
        return units

    def cases(self) -> int:
        """How many records :meth:`run` will produce (for a progress bar)."""
        return sum(len(s) for _, _, s, _ in self.plan())

    def flags(self) -> dict[str, bool]:
        """The options that change what a record holds: a resumed report must have been
        written with the same ones."""
        return {"validation_only": self.config.validation_only,
                "strict_diagnostic": self.config.strict_diagnostic,
                "scale_probe": self.config.scale_probe}

    def _done(self) -> set[tuple[str, str, str]]:
        if not (self.config.resume and Path(self.config.report).is_file()):
            return set()
        records = read_report(self.config.report)
        mine = self.flags()
        for number, record in enumerate(records, 1):
            theirs = record.get("flags")
            if theirs is None and record.get("status") == Status.PASSED.value:
                theirs = {"validation_only": "timing" not in record}  # an older record
            differ = sorted(k for k, v in (theirs or {}).items() if k in mine and v != mine[k])
            if differ:
                said = ", ".join(("--" if theirs[k] else "no --") + k.replace("_", "-")
                                 for k in differ)
                raise DataError(str(self.config.report), f"record {number} was written with "
                                f"{said}: --resume needs the flags the report was written with",
                                field="flags")
        self.records.extend(records)
        return {(r["definition"], r["workload"], r["hashes"]["solution"]) for r in records
                if "hashes" in r and "solution" in r["hashes"]}

    def run(self, on_record: Callable[[dict], None] | None = None) -> list[CaseRecord]:
        """Audit every planned case; ``on_record`` sees each record as it is written
        (and each case a resumed report already held)."""
        done = self._done()
        units = self.plan()
        write_skipped(self.config.report, self.skipped)
        env = {str(d): environment(d) for d in self.devices}
        writer = ReportWriter(self.config.report, append=self.config.resume)
        report = on_record or (lambda record: None)
        for record in self.records:
            report(record)
        work: queue.Queue = queue.Queue()
        for unit in units:
            work.put(unit)

        stopped: list[AuditAborted] = []  # a lane's own failure stops every lane
        lanes: list[Lane] = []

        def lane_main(device: torch.device, finished: threading.Event) -> None:
            try:
                run_lane(device)
            finally:
                finished.set()

        def run_lane(device: torch.device) -> None:
            lane = Lane(self, device)
            with self._lock:
                lanes.append(lane)
            unit = None
            try:
                while not stopped and not self._interrupted.is_set():
                    try:
                        unit = work.get_nowait()
                    except queue.Empty:
                        return
                    self._audit_unit(lane, unit, env[str(device)], done, writer, report)
            except Exception as exc:  # the harness's failure, not a candidate's: no verdict
                where = (f" at {unit[0].name} workload {unit[3].value.workload.uuid}"
                         if unit is not None else "")
                aborted = AuditAborted(f"the audit stopped on {device}{where}: "
                                       f"{type(exc).__name__}: {exc}")
                aborted.__cause__ = exc
                stopped.append(aborted)
            finally:
                lane.close()
                self.notes.extend(lane.isolation.notes)

        # Waited for through events, not Thread.join: a join cut by Ctrl-C can leave the
        # thread looking finished while it still runs.
        finished = [threading.Event() for _ in self.devices]
        for device, event in zip(self.devices, finished):
            threading.Thread(target=lane_main, args=(device, event)).start()
        try:
            for event in finished:
                event.wait()
        except KeyboardInterrupt:  # Ctrl-C: no verdict for the cases cut short, no worker
            self._interrupted.set()  # left behind; the report keeps what was judged
            with self._lock:
                for lane in lanes:
                    lane.isolation.kill_all()
            for event in finished:
                event.wait()  # each lane closes its isolation (directories, uids) first
            writer.close()
            raise
        writer.close()
        if stopped:
            raise stopped[0]
        return [validate_record(r) for r in self.records]

    def _audit_unit(self, lane: Lane, unit, env: dict, done: set, writer: ReportWriter,
                    report: Callable[[dict], None]) -> None:
        for record in self.audit_unit(lane, unit, env, done):
            self._emit(writer, record, report)

    def audit_unit(self, lane: Lane, unit, env: dict, done: set) -> Iterator[dict]:
        """The records of one unit (a workload and its solutions), one per solution not
        in ``done``, each yielded as soon as its case is judged.

        The one place a unit is audited: the local lanes write what it yields, and the
        Ray path (:mod:`hf_eval.judge.distributed`) runs it in a lane actor and streams it back.
        """
        definition, task, solutions, row = unit
        uuid = row.value.workload.uuid
        todo = [s for s in solutions if (definition.name, uuid, solution_hash(s)) not in done]
        if not todo:
            return
        if lane.definition != definition.name:
            lane.isolation.shutdown()
            lane.definition = definition.name
        base = {"definition": definition.name, "workload": uuid, "axes": row.value.workload.axes,
                "device": str(lane.device), "environment": env,
                "baseline": task.baseline.solution, "baseline_timed": task.baseline.timed,
                "flags": self.flags(),
                "hashes": {"definition": source_hash(
                    self.dataset.definitions[definition.name].path.read_text()),
                    "task": source_hash(self.dataset.tasks[definition.name].path.read_text())}}
        if isinstance(row, FreshRow):
            base["fresh"] = row.report_fields()
        try:
            case = lane.prepare_case(definition, task, row)
        except DataError as err:
            for solution in todo:
                yield {**base, "solution": solution.name, "status": Status.DATA_ERROR.value,
                       "reason": str(err),
                       "hashes": {**base["hashes"], "solution": solution_hash(solution)}}
            return
        for solution in todo:
            lane.isolation.end_others(solution_hash(solution))  # outside this record's time
            t0 = time.perf_counter()
            result = lane.judge(solution, case)
            record = {**base, "solution": solution.name,
                      "reference": {"source": case.reference_source,
                                    "seconds": round(case.reference_seconds, 4)},
                      "wall_seconds": round(time.perf_counter() - t0, 4), **result,
                      "hashes": {**base["hashes"], "solution": solution_hash(solution)}}
            # The worker only ever maps sealed copies, so the audit's inputs cannot change;
            # they are verified after every solution all the same, and reloaded if not.
            changed = case.snapshot.changed(case.inputs) if case.snapshot else []
            if changed:
                record["inputs_reloaded"] = changed
                case.inputs = lane._sealed(self.dataset.materialise_inputs(
                    definition, row, "cpu", shared=True))
                case.snapshot = InputSnapshot(list(definition.inputs), case.inputs)
            yield record

    def renew_secret(self) -> None:
        """Draw a new secret (and with it a new fresh suite) for the next audit this object
        runs: a caller that keeps one :class:`Audit` between audits (:mod:`hf_eval.judge.serve`)
        gives each its own, so no audit's fresh content repeats another's."""
        self.secret = secrets.token_bytes(32)
        self.secret_digest = hashlib.sha256(self.secret).hexdigest()
        self.fresh = FreshSource(self.secret)

    def interrupt(self) -> None:
        """From now on no record is written: a case cut short (its worker killed by the
        caller) gets no verdict (:mod:`hf_eval.judge.serve`'s stop; the CLI's Ctrl-C in
        :meth:`run`)."""
        self._interrupted.set()

    def judge_unit(self, lane: Lane, unit, env: dict, writer: ReportWriter,
                   report: Callable[[dict], None]) -> None:
        """Judge one unit on a lane the caller keeps and write its records, each validated
        as :meth:`run` writes them (:meth:`audit_unit`, then :meth:`_emit`)."""
        self._audit_unit(lane, unit, env, set(), writer, report)

    def _emit(self, writer: ReportWriter, record: dict,
              report: Callable[[dict], None]) -> None:
        try:
            validate_record(record)
        except RecordError as exc:  # one bad record never stops the audit
            record = {k: record[k] for k in ("definition", "workload", "solution", "device",
                                             "hashes") if k in record}
            record.update(status=Status.RUNTIME_ERROR.value,
                          reason=f"the audit could not write this case's record ({exc})")
        with self._lock:
            if self._interrupted.is_set():
                return  # a case the interrupt cut short: its worker was killed, no verdict
            writer.write(record)
            self.records.append(record)
            report(record)
