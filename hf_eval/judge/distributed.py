"""``hf-eval audit --ray [ADDRESS]``: the audit's units on a Ray cluster, one report.

Design (``docs/ray.md`` has the why at length):

* **Lanes are actors.** One :class:`LaneActor` per GPU of the cluster (``num_gpus=1``: Ray
  sets ``CUDA_VISIBLE_DEVICES``, so the lane's device is ``cuda:0``), or per CPU on CPU.
  An actor holds a :class:`~hf_eval.judge.audit.Lane`, which keeps its confined candidate
  workers across the units of one definition exactly as a local lane does. The actor is
  the trusted audit side: it materialises inputs, computes references and judges; the
  candidate's code runs only in the confined worker process the lane starts
  (:mod:`hf_eval.isolation.workers`), which inherits none of the actor's environment, file
  descriptors or network, so it cannot reach the cluster.
* **Units.** The planned units of :meth:`Audit.plan` (a workload and its solutions). When
  there are fewer units than twice the lanes, each unit's solutions are split into groups
  so that every lane has work; the reference of such a workload is computed once, by
  :meth:`LaneActor.truth`, and every group's unit gets it through the object store.
* **The unit of commit is one case.** The driver writes each record the moment it
  arrives (flushed and synced, as the local audit does) and remembers its key
  (definition, workload, solution hash), the same key ``--resume`` reads back. A unit
  whose actor dies (killed, or lost with its node) is put back with only the solutions
  that have no line yet, and Ray restarts the actor (``max_restarts``), on another node
  if its node is gone. So a unit that wrote nothing is audited again whole, one that died
  after some records only for the rest, and no line is written twice. Ray's own task
  retries are off: a replayed generator would re-audit cases that already have a line.
* **Secret and fresh content.** The driver draws the audit's secret and hands it to the
  actors (trusted); it never leaves them, as in the local audit. The per-GPU timing lock
  is the local one (:func:`hf_eval.isolation.workers.gpu_lock`, a lock file per physical GPU
  UUID), so it holds between lanes, and against local audits, on one machine.

Ray is imported by this module only; the plain audit never imports it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from hf_eval.data.errors import DataError
from hf_eval.data.repository import Located
from hf_eval.data.schema import Definition, Solution, TaskConfig
from hf_eval.data.sources import solution_hash
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.judge.audit import Audit, AuditConfig, Lane
from hf_eval.judge.input_sets import InputSnapshot, scale_probe
from hf_eval.judge.records import CaseRecord
from hf_eval.judge.report import ReportWriter, environment

#: The Ray release the extra pins (pyproject.toml); every node must run the same one.
RAY_VERSION = "2.60.0"

try:
    import ray
    import ray.exceptions
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(f"`audit --ray` needs Ray: pip install 'hf-eval[ray]' "
                      f"(ray=={RAY_VERSION})") from exc
#: Times one unit may be lost with its actor before the audit gives up on it.
MAX_ATTEMPTS = 3
#: Restarts Ray grants one lane actor (after a kill or the loss of its node).
MAX_RESTARTS = 4
#: Seconds to wait for a lane actor to start (or restart): a cluster may need to add a node.
START_TIMEOUT_S = 600.0
#: Thread settings a confined worker inherits (executor.INHERITED). Ray sets them to 1 in a
#: one-CPU actor; a lane restores the driver's, so candidates get what a local audit gives.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


class RayAuditError(Exception):
    """The cluster could not finish the audit (lanes lost, a unit lost too often, nodes
    whose harness or dataset differ from the driver's). The report keeps every line
    written so far; ``--resume`` continues it."""


# ---------------------------------------------------------------------- what travels
@dataclass(frozen=True)
class Placement:
    """Where a lane runs; each record carries it (``placement``)."""

    node_ip: str
    """The IP address of the node the lane runs on."""
    node_id: str
    """Ray's id of that node (the summary counts nodes by it)."""
    pid: int
    """The lane actor's process id."""
    accelerators: tuple[str, ...]
    """Ray's accelerator ids of this lane (the GPU it was given), empty on CPU."""
    tempdir: str
    """Python's temporary directory there: where the per-GPU lock files live."""


@dataclass(frozen=True)
class LaneInfo:
    """What a lane actor reports when it starts: the driver refuses a mismatch."""

    placement: Placement
    """Where the lane runs."""
    device: str
    """The lane's device: "cuda:0" (the one GPU Ray gave it) or "cpu"."""
    ray_version: str
    """The Ray version on the lane's node; one other than the driver's is refused."""
    harness: str
    """Digest of the harness's sources on that node (:func:`harness_digest`)."""
    dataset: dict[str, str]
    """Per planned definition, a digest of its definition, task and workload files."""


@dataclass
class Truth:
    """A workload's reference outputs, computed once on one lane and shared with the
    others through the object store (CPU tensors), or the data error that stopped it."""

    definition: str
    """The definition's name."""
    workload: str
    """The workload's UUID: a lane uses the truth for this workload only."""
    outputs: tuple[torch.Tensor, ...] | None = None
    """The reference outputs, on the CPU; None when ``error`` is set."""
    source: str = "computed"
    """Where the computing lane got them: "computed", or "cache" (its node's reference
    cache)."""
    seconds: float = 0.0
    """Seconds the reference took to compute on that lane (0 from the cache)."""
    probe: tuple[torch.Tensor, ...] | None = None
    """The scale probe's reference outputs, on the CPU; None when the probe is off or has
    nothing to vary."""
    error: tuple[str, str, int | None, str | None] | None = None
    """``DataError`` fields (file, rule, line, field) when the reference could not be had."""

    def raise_error(self) -> None:
        if self.error is not None:
            file, rule, line, where = self.error
            raise DataError(file, rule, line=line, field=where)


@dataclass
class RayUnit:
    """One dispatch: a workload and a group of its solutions (all of them, unless split)."""

    definition: Definition
    """The workload's definition."""
    task: TaskConfig
    """The definition's task."""
    solutions: list[Solution]
    """The solutions to judge on the workload; when the unit is put back, only those
    without a line yet."""
    row: Located
    """The workload row (a lane looks its own copy up by the workload's UUID)."""
    group: int = 0
    """Which of the workload's solution groups this is (0 for the first)."""
    groups: int = 1
    """How many groups the workload's solutions were split into (1: not split)."""
    attempts: int = 0
    """Times the unit was lost with its lane; at the audit's ``max_attempts`` the audit
    stops."""

    @property
    def workload(self) -> tuple[str, str]:
        return self.definition.name, self.row.value.workload.uuid

    def describe(self) -> str:
        names = ", ".join(s.name for s in self.solutions)
        return f"{self.definition.name} / {self.row.value.workload.uuid} ({names})"


def harness_digest() -> str:
    """SHA-256 over the harness's own sources (``hf_eval/**.py`` and its JSON data), so a
    node running another version of the judge is refused rather than mixed in."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".json")
                       and "__pycache__" not in p.parts):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def dataset_digest(dataset: Dataset, definition: str) -> str:
    """A digest of what decides a definition's verdicts on this node: its definition,
    task and workload files (tensors are verified by content wherever they load)."""
    digest = hashlib.sha256()
    paths = [dataset.definitions[definition].path, dataset.tasks[definition].path]
    paths += sorted({row.path for row in dataset.workloads.get(definition, [])})
    for path in paths:
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def split_units(units: list[tuple], lanes: int) -> list[RayUnit]:
    """The dispatches for ``units`` (:meth:`Audit.plan`'s, already without finished cases).

    Whole units, as the local lanes take them, when there are at least twice as many as
    lanes; otherwise each unit's solutions are split into up to ``ceil(2 * lanes /
    units)`` groups, so that a few workloads with many candidates still fill every lane.
    """
    if not units:
        return []
    want = -(-2 * lanes // len(units))
    out = []
    for definition, task, solutions, row in units:
        size = -(-len(solutions) // max(1, min(want, len(solutions))))
        chunks = [solutions[i:i + size] for i in range(0, len(solutions), size)]
        out += [RayUnit(definition, task, chunk, row, group=g, groups=len(chunks))
                for g, chunk in enumerate(chunks)]
    return out


# ---------------------------------------------------------------------- the lane actor
class SharedTruthLane(Lane):
    """A lane that takes a workload's reference from a :class:`Truth` when it has one."""

    shipped: Truth | None = None
    """The reference the driver sent with the lane's current unit, used for its workload;
    None: the lane computes (or reads) it itself."""

    def reference(self, definition: Definition, row: Located, inputs: list[object],
                  tag: str, snapshot: InputSnapshot | None = None
                  ) -> tuple[tuple[torch.Tensor, ...], str, float]:
        truth = self.shipped
        if truth is not None and truth.workload == row.value.workload.uuid:
            truth.raise_error()
            outputs = truth.outputs if tag == "main" else truth.probe
            if outputs is not None:
                return (tuple(t.to(self.device) for t in outputs), truth.source,
                        truth.seconds if tag == "main" else 0.0)
        return super().reference(definition, row, inputs, tag, snapshot)


class LaneActor:
    """One lane of the audit on a Ray worker: the trusted side, never a candidate's code.

    Created with the driver's dataset root, configuration and secret; looks definitions,
    tasks and workloads up in its own copy of the dataset (the driver checks the copies
    agree, :class:`LaneInfo`), and judges through the same :class:`~hf_eval.judge.audit.Lane`
    and :meth:`~hf_eval.judge.audit.Audit.audit_unit` as the local audit.
    """

    def __init__(self, root: str, config: AuditConfig, secret: bytes, device_type: str,
                 cache: str | None, definitions: list[str],
                 threads: dict[str, str | None]) -> None:
        if cache:  # the driver's reference cache (each node keeps its own copy of it)
            os.environ["HF_EVAL_CACHE"] = cache
        for name, value in threads.items():  # for the workers this lane starts
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        os.chdir(root)  # the environment's git commit is the dataset clone's
        self.dataset = open_dataset(root)
        self.audit = Audit(self.dataset, config)
        self.audit.secret = secret
        self.audit.secret_digest = hashlib.sha256(secret).hexdigest()
        if device_type == "cuda":
            if torch.cuda.device_count() != 1:
                raise RuntimeError(f"a CUDA lane must see exactly one GPU, this one sees "
                                   f"{torch.cuda.device_count()} (CUDA_VISIBLE_DEVICES="
                                   f"{os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
            device = torch.device("cuda", 0)
        else:
            device = torch.device("cpu")
        self.lane = SharedTruthLane(self.audit, device)
        self.env = environment(device)
        context = ray.get_runtime_context()
        self.placement = Placement(
            node_ip=ray.util.get_node_ip_address(), node_id=context.get_node_id(),
            pid=os.getpid(), accelerators=tuple(str(i) for i in ray.get_gpu_ids()),
            tempdir=tempfile.gettempdir())
        self.info = LaneInfo(self.placement, str(device), ray.__version__, harness_digest(),
                             {d: dataset_digest(self.dataset, d) for d in definitions
                              if d in self.dataset.definitions and d in self.dataset.tasks})

    def hello(self) -> LaneInfo:
        return self.info

    def _unit(self, definition: str, uuid: str) -> tuple[Definition, TaskConfig, Located]:
        rows = [r for r in self.dataset.workloads.get(definition, [])
                if r.value.workload.uuid == uuid]
        if not rows:
            raise DataError(f"workloads/ (node {self.placement.node_ip})",
                            f"no workload {uuid} of {definition}")
        return self.dataset.definition(definition), self.dataset.task(definition), rows[0]

    def truth(self, definition_name: str, uuid: str) -> Truth:
        """The workload's reference (and scale-probe reference), on CPU for the object store."""
        definition, _, row = self._unit(definition_name, uuid)
        try:
            inputs = self.dataset.materialise_inputs(definition, row, "cpu")
            outputs, source, seconds = self.lane.reference(definition, row, inputs, "main")
            probe = None
            if self.audit.config.scale_probe:
                probed = scale_probe(definition, inputs)
                if probed is not None:
                    probe = self.lane.reference(definition, row, probed, "probe")[0]
                    probe = tuple(t.cpu() for t in probe)
        except DataError as err:
            return Truth(definition_name, uuid, error=(err.file, err.rule, err.line,
                                                       err.field))
        return Truth(definition_name, uuid, tuple(t.cpu() for t in outputs), source,
                     round(seconds, 4), probe)

    def audit_unit(self, definition_name: str, uuid: str, solutions: list[Solution],
                   truth: Truth | None = None) -> Iterator[dict]:
        """The unit's records, one per solution, streamed back as each case is judged."""
        definition, task, row = self._unit(definition_name, uuid)
        self.lane.shipped = truth
        try:
            for record in self.audit.audit_unit(self.lane, (definition, task, solutions, row),
                                                self.env, set()):
                if truth is not None and "reference" in record:
                    record["reference"]["shared"] = True
                record["placement"] = asdict(self.placement)
                yield record
        finally:
            self.lane.shipped = None

    def close(self) -> None:
        self.lane.close()


RemoteLane = ray.remote(LaneActor)


# ---------------------------------------------------------------------- the driver
def _record_key(record: dict) -> tuple[str, str, str, str]:
    """A case: definition, workload, solution name and hash (two solutions of identical
    code are still two cases of the report, as in the local audit)."""
    return (record["definition"], record["workload"], record["solution"],
            record["hashes"]["solution"])


@dataclass
class _State:
    """What the lane threads share, under one condition variable."""

    queue: list[RayUnit]
    """The units no lane has taken yet; a lost unit is put back at the front."""
    committed: set[tuple[str, str, str, str]]
    """The cases with a line in the report (definition, workload, solution name and
    hash): a record for one of them that arrives again is dropped."""
    in_flight: int = 0
    """Units a lane has taken and not finished."""
    live_lanes: int = 0
    """Lane threads still running: when the last ends with units left, the audit fails."""
    error: BaseException | None = None
    """The first error that stops the audit, raised once every lane thread has ended;
    None: none."""
    stop: bool = False
    """Set when the audit must stop (an error, Ctrl-C, a unit lost too often): no lane
    takes another unit."""
    truths: dict[tuple[str, str], object] = field(default_factory=dict)
    """Per split workload (definition, UUID), Ray's reference to its :class:`Truth`, asked
    of the first lane that takes one of its units; dropped when its last unit finishes or
    a unit of it is lost."""
    open_units: Counter = field(default_factory=Counter)
    """Per workload (definition, UUID), how many of its units are not finished."""


class RayAudit:
    """The audit on a Ray cluster, with :class:`~hf_eval.judge.audit.Audit`'s interface:
    ``cases()``, ``notes`` and ``run(on_record) -> list[CaseRecord]``.

    ``address``: None starts (or joins, per ``RAY_ADDRESS``) Ray as ``ray.init()`` does;
    ``"auto"`` or ``host:port`` joins a running cluster. When Ray is already initialised
    in this process (tests) that connection is used and left open. ``lanes``: how many
    lane actors (default: one per GPU of the cluster on CUDA, per CPU on CPU).
    """

    def __init__(self, dataset: Dataset, config: AuditConfig, address: str | None = None,
                 lanes: int | None = None, max_attempts: int = MAX_ATTEMPTS) -> None:
        if address and address.startswith("ray://"):
            raise RayAuditError("Ray Client addresses (ray://) are not supported: run the "
                                "audit on a node of the cluster (--ray auto)")
        devices = {torch.device(d).type for d in config.devices}
        if len(config.devices) != 1 or devices - {"cpu", "cuda"} or \
                torch.device(config.devices[0]).index is not None:
            raise RayAuditError(f"--ray takes one device type, cpu or cuda, not "
                                f"{', '.join(config.devices)}: each lane gets its own GPU")
        self.dataset = dataset
        self.config = config
        self.audit = Audit(dataset, config)  # the plan, --resume, the secret
        self.device_type = devices.pop()
        self.address = address
        self.lanes = lanes
        self.max_attempts = max_attempts
        #: One line per unit put back after its lane was lost (what and why).
        self.retries: list[str] = []
        #: How many workloads had their reference computed once and shared.
        self.shared_truths = 0
        #: Records that arrived for a case that already had its line (dropped, counted).
        self.duplicates = 0
        self.lane_infos: list[LaneInfo] = []
        #: Seconds from ``run``'s start: Ray connected, each lane ready (its first hello).
        self.timings: dict[str, float] = {}
        self._actors: list = []

    @property
    def notes(self) -> list[str]:
        return self.audit.notes

    @property
    def refused(self) -> list[DataError]:
        """What the plan refused (a dev UUID that names no workload, say): the audit's."""
        return self.audit.refused

    def summary(self) -> str:
        """One line for the command line: lanes, nodes, start-up, retries, shared truths."""
        kind = "GPU" if self.device_type == "cuda" else "CPU"
        nodes = len({i.placement.node_id for i in self.lane_infos})
        ready = [v for k, v in self.timings.items() if k.startswith("lane")]
        start = (f"connected in {self.timings['connected']:.1f} s, lanes ready in "
                 f"{min(ready):.1f}-{max(ready):.1f} s; " if ready else "")
        return (f"ray: {len(self.lane_infos)} lane(s), one {kind} each, on {nodes} node(s); "
                f"{start}{len(self.retries)} unit(s) put back; "
                f"{self.shared_truths} reference(s) computed once and shared")

    def cases(self) -> int:
        return self.audit.cases()

    # ------------------------------------------------------------------ cluster
    def _connect(self) -> bool:
        """Initialise Ray unless it is; True when this audit started the connection."""
        if ray.is_initialized():
            return False
        options: dict = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address is None:
            options["include_dashboard"] = False
        ray.init(address=self.address, **options)
        return True

    def _lane_count(self) -> int:
        if self.lanes is not None:
            return self.lanes
        resources = ray.cluster_resources()
        key = "GPU" if self.device_type == "cuda" else "CPU"
        count = int(resources.get(key, 0))
        if count < 1:
            raise RayAuditError(f"the Ray cluster has no {key} (resources: "
                                f"{sorted(resources)}): --device {self.device_type} needs one")
        return count

    def _check(self, info: LaneInfo, definitions: list[str]) -> None:
        """Refuse a lane whose judge, dataset or lock directory differs from the driver's."""
        where = f"lane on node {info.placement.node_ip} (pid {info.placement.pid})"
        if info.ray_version != ray.__version__:
            raise RayAuditError(f"{where} runs Ray {info.ray_version}, the driver "
                                f"{ray.__version__}")
        if info.harness != harness_digest():
            raise RayAuditError(f"{where} runs another version of hf_eval (its sources "
                                "differ from the driver's): install the same commit there")
        for name in definitions:
            mine = dataset_digest(self.dataset, name)
            if info.dataset.get(name) != mine:
                raise RayAuditError(f"{where}: the definition, task or workload files of "
                                    f"{name} differ from the driver's (or are missing) under "
                                    f"{self.dataset.root}")
        if info.placement.node_ip == ray.util.get_node_ip_address() and \
                info.placement.tempdir != tempfile.gettempdir():
            raise RayAuditError(f"{where}: its temporary directory {info.placement.tempdir} "
                                f"is not the driver's {tempfile.gettempdir()}, so the "
                                "per-GPU timing lock would not be shared (set TMPDIR alike)")

    # ------------------------------------------------------------------ run
    def run(self, on_record: Callable[[dict], None] | None = None) -> list[CaseRecord]:
        """Audit every planned case not yet in the report; ``on_record`` sees each record
        as it is written (and each one a resumed report already held)."""
        report = on_record or (lambda record: None)
        t0 = time.monotonic()
        done = self.audit._done()
        planned = self.audit.plan()
        todo = []
        for definition, task, solutions, row in planned:
            uuid = row.value.workload.uuid
            rest = [s for s in solutions if (definition.name, uuid,
                                             self._solution_key(s)) not in done]
            if rest:
                todo.append((definition, task, rest, row))
        for record in self.audit.records:
            report(record)
        writer = ReportWriter(self.config.report, append=self.config.resume)
        started = False
        try:
            if todo:
                started = self._connect()
                self.timings["connected"] = time.monotonic() - t0
                lanes = self._lane_count()
                units = split_units(todo, lanes)
                state = _State(queue=units, committed={
                    _record_key(r) for r in self.audit.records if "hashes" in r})
                for unit in units:
                    state.open_units[unit.workload] += 1
                self._run(state, lanes, sorted({d.name for d, _, _, _ in todo}), writer,
                          report, t0)
        finally:
            writer.close()
            self._close_actors()
            if started:
                ray.shutdown()
        return [CaseRecord.model_validate(r) for r in self.audit.records]

    @staticmethod
    def _solution_key(solution: Solution) -> str:
        return solution_hash(solution)

    def _run(self, state: _State, lanes: int, definitions: list[str], writer: ReportWriter,
             report: Callable[[dict], None], t0: float) -> None:
        cond = threading.Condition()
        cache = os.environ.get("HF_EVAL_CACHE")
        options = ({"num_gpus": 1, "num_cpus": 1} if self.device_type == "cuda"
                   else {"num_cpus": 1})
        for _ in range(lanes):
            self._actors.append(RemoteLane.options(
                max_restarts=MAX_RESTARTS, max_task_retries=0, **options).remote(
                str(Path(self.dataset.root).resolve()), self.config, self.audit.secret,
                self.device_type, cache, definitions,
                {k: os.environ.get(k) for k in THREAD_VARIABLES}))
        state.live_lanes = lanes

        def fail(exc: BaseException) -> None:
            with cond:
                if state.error is None:
                    state.error = exc
                state.stop = True
                cond.notify_all()

        def commit(record: dict) -> None:
            key = _record_key(record)
            with cond:
                if key in state.committed:
                    self.duplicates += 1
                    return
                writer.write(record)
                state.committed.add(key)
                self.audit.records.append(record)
                report(record)

        def take(actor, last: tuple | None) -> tuple[RayUnit, object] | None:
            """The lane's next unit and the shared reference it needs (asked of this lane
            if nobody has yet: under the lock, so a workload's is asked for once)."""
            with cond:
                while True:
                    if state.stop:
                        return None
                    if state.queue:
                        unit = self._pick(state.queue, last)
                        state.in_flight += 1
                        truth = None
                        if unit.groups > 1:
                            truth = state.truths.get(unit.workload)
                            if truth is None:  # a call, not a wait: it returns a reference
                                truth = actor.truth.remote(*unit.workload)
                                state.truths[unit.workload] = truth
                                self.shared_truths += 1
                        return unit, truth
                    if state.in_flight == 0:
                        return None
                    cond.wait()

        def finish(unit: RayUnit, failure: BaseException | None) -> None:
            with cond:
                state.in_flight -= 1
                rest = [s for s in unit.solutions
                        if (*unit.workload, s.name, self._solution_key(s))
                        not in state.committed]
                if failure is not None and rest and not state.stop:
                    unit.attempts += 1
                    state.truths.pop(unit.workload, None)  # may have gone with the node
                    self.retries.append(f"{unit.describe()}: attempt {unit.attempts} lost "
                                        f"({type(failure).__name__}); {len(rest)} of "
                                        f"{len(unit.solutions)} solutions put back")
                    if unit.attempts >= self.max_attempts:
                        state.error = RayAuditError(
                            f"{unit.describe()} was lost {unit.attempts} times; last: "
                            f"{failure}")
                        state.stop = True
                    else:
                        unit.solutions = rest
                        state.queue.insert(0, unit)
                else:
                    state.open_units[unit.workload] -= 1
                    if state.open_units[unit.workload] <= 0:
                        state.truths.pop(unit.workload, None)  # frees the object
                cond.notify_all()

        def lane_main(actor) -> None:
            last = None
            try:
                info = ray.get(actor.hello.remote(), timeout=START_TIMEOUT_S)
                self._check(info, definitions)
                with cond:
                    self.lane_infos.append(info)
                    self.timings[f"lane {len(self.lane_infos)}"] = time.monotonic() - t0
                while (job := take(actor, last)) is not None:
                    unit, truth = job
                    last = (unit.definition.name, unit.group)
                    try:
                        for ref in actor.audit_unit.remote(*unit.workload, unit.solutions,
                                                           truth):
                            commit(ray.get(ref))
                    except ray.exceptions.RayTaskError as exc:  # the harness raised: a bug
                        finish(unit, None)
                        raise exc.as_instanceof_cause() from None
                    except ray.exceptions.RayError as exc:  # the actor or an object lost
                        finish(unit, exc)
                        if state.stop:
                            return
                        try:  # Ray restarts the actor (elsewhere if its node is gone)
                            self._check(self._restarted(actor), definitions)
                        except ray.exceptions.RayError as lost:
                            with cond:
                                self.retries.append(f"a lane is gone for good: {lost}")
                            return
                        continue
                    except BaseException:
                        finish(unit, None)
                        raise
                    finish(unit, None)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                fail(exc)
            finally:
                with cond:
                    state.live_lanes -= 1
                    if state.live_lanes == 0 and state.queue and state.error is None:
                        state.error = RayAuditError(
                            f"every lane was lost with {len(state.queue)} unit(s) left "
                            "(see the retries above); --resume continues the report")
                        state.stop = True
                    cond.notify_all()

        threads = [threading.Thread(target=lane_main, args=(a,), daemon=True,
                                    name=f"ray-lane-{i}") for i, a in enumerate(self._actors)]
        for thread in threads:
            thread.start()
        try:
            with cond:
                while not state.stop and any(t.is_alive() for t in threads):
                    cond.wait(0.5)
        except BaseException as exc:  # Ctrl-C in the driver: stop the lanes, keep the lines
            fail(exc)
        if state.stop:
            # Stop now: a killed lane produces no further record, and every line already
            # written is a whole case. Its idle workers exit when their channel closes.
            self._close_actors(graceful=False)
        for thread in threads:
            thread.join()
        if state.error is not None:
            raise state.error

    @staticmethod
    def _restarted(actor) -> LaneInfo:
        """The lane's info once Ray has restarted it; raises when it will not come back."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                return ray.get(actor.hello.remote(),
                               timeout=max(1.0, deadline - time.monotonic()))
            except ray.exceptions.ActorUnavailableError:  # restarting: not yet reachable
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    @staticmethod
    def _pick(queue: list[RayUnit], last: tuple | None) -> RayUnit:
        """The next unit for a lane: its last (definition, group) if any is left, so its
        candidate workers are reused; else one of its definition; else the first."""
        if last is not None:
            for match in (lambda u: (u.definition.name, u.group) == last,
                          lambda u: u.definition.name == last[0]):
                for i, unit in enumerate(queue):
                    if match(unit):
                        return queue.pop(i)
        return queue.pop(0)

    def _close_actors(self, graceful: bool = True) -> None:
        """End the lanes: gracefully (each closes its workers first) when they are idle,
        at once when the audit stops early."""
        actors, self._actors = self._actors, []
        if graceful and actors:
            try:
                ray.get([a.close.remote() for a in actors], timeout=60)
            except ray.exceptions.RayError:
                pass  # a lane already gone has nothing left to close
        for actor in actors:
            ray.kill(actor, no_restart=True)
