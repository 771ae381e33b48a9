"""One solution on one case: every call checked, every timed call on content never seen.

The scheme (docs/verdicts.md says why each known cheat fails under it):

* **Every call is checked.** The first call, warm-up calls and every call inside a timed
  trial go through the worker's one ``trial`` path; afterwards the audit collects every
  output and judges it against the reference of the content that call was given. A
  candidate that can tell timing from checking (stack, call count, spacing) gains
  nothing, because there is no unchecked call.
* **Timed calls get fresh content.** Each timed call gets its own input set: the
  floating-point inputs permuted with a generator seeded from the audit's secret, so a
  cache keyed on content (or on pointers) never hits, and the content cannot be
  predicted or precomputed. The pool of sets is bounded by :data:`POOL_BYTES`: a trial
  takes fewer calls when a workload's sets are large, and the report says so.
* **``prepare`` sees a decoy.** Prepared launches are built while their buffers hold
  the workload's original content; the real content is written afterwards, so a
  ``prepare`` that computes the answer returns the wrong one.
* **Graphs are poisoned.** A CUDA graph is captured on decoy content; before each replay
  its input buffers get fresh content and its output buffers are filled with NaN (or
  -7), so work done only at capture fails.
* **The audit's clock bounds the time.** Every trial ends with a device-wide synchronise
  in the worker; the audit times the request itself, subtracts the request overhead
  measured before the candidate loaded, and reports ``max(event time, that bound)``.
  Work on side streams or in threads that finish before the reply is counted; CUPTI's
  kernel time and its span over every stream are reported beside.
"""

from __future__ import annotations

import hashlib
import secrets
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from hf_eval.acceptance import compare_outputs
from hf_eval.executor import WorkerFailure, WorkerHandle
from hf_eval.schema import Definition, TaskConfig
from hf_eval.schema import Timing as TimingConfig
from hf_eval.snapshot import InputSnapshot
from hf_eval.variants import fresh_content

#: Bytes of input sets, candidate outputs and references one trial may hold at once.
POOL_BYTES = {"cpu": 1 << 30, "cuda": 8 << 30}
#: CPU timing is for orientation only: two trials of one call each.
CPU_TIMING = TimingConfig(warmup=0, iters=1, trials=2)
#: Calls of a trial judged against their reference: all of them up to this many, else
#: this many drawn at random once the trial's outputs are in (every output comes back,
#: so the candidate cannot know which). A candidate that cheats on a fraction f of its
#: calls passes a trial with probability (1 - f) ** JUDGED_PER_TRIAL.
JUDGED_PER_TRIAL = 8
_RANDOM = secrets.SystemRandom()
#: A timing request may take this many times the task's per-call timeout.
TIMING_TIMEOUT_FACTOR = 3


@dataclass
class InputSet:
    """Inputs the worker gets (shared CPU memory) and the truth for their content."""

    id: str
    inputs: list[object]
    #: The reference outputs, or a function computing them when the set is judged (a
    #: fresh set whose call is not among those judged never needs its truth).
    truth: tuple[torch.Tensor, ...] | Callable[[], tuple[torch.Tensor, ...]]
    snapshot: InputSnapshot | None = None

    @property
    def reference(self) -> tuple[torch.Tensor, ...]:
        if callable(self.truth):
            self.truth = self.truth()
        return self.truth


@dataclass
class Failure(Exception):
    """A verdict other than PASSED, raised out of the session."""

    result: dict


@dataclass
class Session:
    """The checked and timed calls of one solution on one case, over one worker."""

    handle: WorkerHandle
    #: Gives the lane's harness-only worker (the same requests without a candidate),
    #: started on first use: a validation-only audit never needs one.
    stand_in_worker: Callable[[], WorkerHandle]
    definition: Definition
    task: TaskConfig
    device: torch.device
    main: InputSet
    #: ``inputs -> reference``, computed by the audit, never by the worker.
    reference: Callable[[list[object]], tuple[torch.Tensor, ...]]
    #: Seeds every fresh input set; a digest of it goes into the report.
    secret: bytes
    timeout: float
    strict: object | None = None
    #: Overwrite the L2 cache before every timed trial (``audit --cold-l2``).
    cold_l2: bool = False
    counter: int = 0
    distinct_sets: int = 0
    registered: set[str] = field(default_factory=set)
    #: The last timed trial's request, phase by phase, candidate beside stand-in.
    phases: dict | None = None
    _stand_in: WorkerHandle | None = None

    @property
    def stand_in(self) -> WorkerHandle:
        if self._stand_in is None:
            self._stand_in = self.stand_in_worker()
        return self._stand_in

    def _both(self) -> list[WorkerHandle]:
        """The candidate's worker and the stand-in, if it has been needed yet."""
        return [self.handle] + ([self._stand_in] if self._stand_in is not None else [])

    # ------------------------------------------------------------------ requests
    def _request(self, message: dict, timeout: float | None = None,
                 handle: WorkerHandle | None = None) -> tuple[dict, float]:
        reply, wall_ms = (handle or self.handle).request(message, timeout or self.timeout)
        if reply.get("status") != "OK":
            raise Failure({k: reply[k] for k in ("status", "reason") if k in reply}
                          | ({"fatal": True} if reply.get("fatal") else {}))
        return reply, wall_ms

    def _new(self, sets: list[InputSet]) -> dict:
        """The sets the worker does not hold yet, keyed by id (sent with the next trial)."""
        new = {s.id: s.inputs for s in sets if s.id not in self.registered}
        self.registered.update(new)
        return new

    def forget(self, ids: list[str], graph: bool = False) -> None:
        for handle in self._both():
            self._request({"op": "forget", "ids": ids, "graph": graph}, handle=handle)
        self.registered.difference_update(ids)

    def fresh(self) -> InputSet:
        """An input set of new content, with its reference."""
        self.counter += 1
        digest = hashlib.sha256(self.secret + self.counter.to_bytes(8, "little")).digest()
        generator = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)
        inputs = fresh_content(self.definition, self.main.inputs, generator)
        self.distinct_sets += 1
        return InputSet(f"s{self.counter}-{digest[8:12].hex()}", inputs,
                        lambda: self.reference(inputs))

    # ------------------------------------------------------------------ judging
    def _judge(self, outputs: list[torch.Tensor], truth: InputSet, when: str) -> dict:
        names = list(self.definition.outputs)
        reference = truth.reference
        tensors = tuple(o.to(r.device) for o, r in zip(outputs, reference))
        verdicts = compare_outputs(names, tensors, reference, self.task.tolerance_for)
        failed = [v for v in verdicts if not v.passed]
        result = {"status": "PASSED", "outputs": [v.to_json() for v in verdicts]}
        if failed:
            result.update(status=failed[0].status,
                          reason=f"{when}: {failed[0].name}: {failed[0].reason}")
        if self.strict is not None:
            strict = compare_outputs(names, tensors, reference, lambda _: self.strict)
            result["diagnostic"] = [v.to_json() for v in strict]
        return result

    def _judge_all(self, reply: dict, sets: list[InputSet], when: str) -> dict:
        """Judge every output of a trial; the first failure ends the session."""
        produced = reply.get("outputs")
        n_outputs = len(self.definition.outputs)
        if not (isinstance(produced, list) and len(produced) == len(sets) and all(
                isinstance(o, list) and len(o) == n_outputs
                and all(type(t) is torch.Tensor for t in o) for o in produced)):
            raise Failure({"status": "RUNTIME_ERROR", "fatal": True,
                           "reason": f"result channel tampering: the reply does not hold "
                                     f"{n_outputs} tensor(s) for each of {len(sets)} call(s)"})
        changed: set[tuple] = set()
        if self.device.type == "cuda":
            asked, _ = self._request({"op": "changed", "ids": sorted({s.id for s in sets})})
            changed = {tuple(c) for c in asked.get("changed", [])}
        names = list(self.definition.inputs)
        first = None
        judged = range(len(sets))
        if len(sets) > JUDGED_PER_TRIAL:  # which ones is drawn after the calls were made
            judged = sorted(_RANDOM.sample(range(len(sets)), JUDGED_PER_TRIAL))
        for index in judged:
            truth, outputs = sets[index], produced[index]
            label = when if len(sets) == 1 else f"{when} (call {index + 1} of {len(sets)})"
            result = self._judge(outputs, truth, label)
            modified = [names[i] for (sid, i) in changed if sid == truth.id]
            if truth.snapshot is not None:
                modified += truth.snapshot.changed(truth.inputs)
            if modified and result["status"] == "PASSED":
                result = {"status": "INCORRECT_NUMERICAL",
                          "reason": f"{label}: input(s) modified: {', '.join(sorted(modified))}"}
            if result["status"] != "PASSED":
                raise Failure(result)
            first = first or result
        return first

    def _trial(self, method: str, sets: list[InputSet], when: str, *, refresh: bool = False,
               timed: bool = False, profile: bool = False) -> tuple[dict, float, float, dict]:
        """One clocked trial request, every output judged: (first verdict, event ms, the
        audit's bound in ms, the reply). The bound is this request's wall time on the
        audit's clock less the same request's wall time on the stand-in worker."""
        if timed and self.cold_l2:
            for handle in (self.handle, self.stand_in):
                self._request({"op": "flush"}, handle=handle)
        message = {"op": "trial", "method": method, "ids": [s.id for s in sets],
                   "sets": self._new(sets), "refresh": [s.id for s in sets] if refresh else [],
                   "n_outputs": len(self.definition.outputs), "profile": profile}
        reply, wall_ms = self._request(
            message, self.timeout * (TIMING_TIMEOUT_FACTOR if len(sets) > 1 or timed else 1))
        verdict = self._judge_all(reply, sets, when)
        bound = 0.0
        if timed:
            # The same message three times (the stand-in holds every set the candidate
            # holds, and re-registers the new ones each time); its cheapest run is the cost.
            stand_in = {**message, "method": "eager", "profile": False}
            runs = [self._request(stand_in, handle=self.stand_in) for _ in range(3)]
            cheapest = min(runs, key=lambda run: run[1])
            bound = max(0.0, wall_ms - cheapest[1])
            self.phases = {"candidate": reply.get("phases_ms"), "candidate_wall": wall_ms,
                           "stand_in": cheapest[0].get("phases_ms"),
                           "stand_in_wall": cheapest[1]}
        event = float(reply.get("event_ms", 0.0))
        if not event >= 0.0:  # NaN or negative: a forged number counts as nothing
            event = 0.0
        return verdict, event, bound, reply

    def call(self, sets: list[InputSet], when: str, refresh: bool = False) -> dict:
        """Eager calls on these sets in one trial, every output judged."""
        return self._trial("eager", sets, when, refresh=refresh)[0]

    # ------------------------------------------------------------------ timing
    def _iters(self, spec: TimingConfig) -> int:
        """Calls per trial that fit the pool (each call holds a set, its output and truth)."""
        per_set = sum(t.numel() * t.element_size() for t in self.main.inputs
                      if isinstance(t, torch.Tensor) and t.dtype.is_floating_point)
        per_set += 3 * sum(r.numel() * r.element_size() for r in self.main.reference)
        budget = POOL_BYTES["cuda" if self.device.type == "cuda" else "cpu"]
        return max(1, min(spec.iters, budget // max(1, per_set)))

    def _with_original_content(self, sets: list[InputSet]) -> list[list[tuple]]:
        """Write the workload's original content into the sets' varied buffers (a decoy);
        return (buffer, real content) pairs to write back."""
        saved = []
        for s in sets:
            pairs = []
            for mine, original in zip(s.inputs, self.main.inputs):
                if isinstance(mine, torch.Tensor) and mine is not original:
                    pairs.append((mine, mine.clone()))
                    mine.copy_(original)
            saved.append(pairs)
        return saved

    def _stage(self, sets: list[InputSet], prepare: bool) -> None:
        """Hand the sets to both workers while their buffers hold the workload's original
        content (a decoy: ``prepare`` runs now, on it), then write the real content, which
        the workers take in inside the clocked trial (``refresh``). So the clocked request
        moves only new content, not new buffers, and the candidate sees the real content
        only inside it."""
        saved = self._with_original_content(sets)
        new = self._new(sets)
        for handle in (self.handle, self.stand_in):
            self._request({"op": "trial", "method": "none", "ids": [], "sets": new,
                           "n_outputs": 0}, handle=handle)
        if prepare:
            self._request({"op": "prepare", "ids": [s.id for s in sets]},
                          self.timeout * TIMING_TIMEOUT_FACTOR)
        for pairs in saved:
            for mine, content in pairs:
                mine.copy_(content)

    def _stage_stand_in(self) -> None:
        self._request({"op": "stage", "outputs": [r.cpu() for r in self.main.reference]},
                      handle=self.stand_in)

    def time(self, method: str, spec: TimingConfig, cuda: bool) -> dict:
        """Warm-up, then ``trials`` timed trials on fresh sets (plus one profiled trial on
        CUDA); every output judged. Per-call milliseconds."""
        self._stage_stand_in()
        iters = self._iters(spec)
        if method == "prepared":
            self._request({"op": "prepare", "ids": [self.main.id]})
        if spec.warmup:
            self._trial(method, [self.main] * spec.warmup, f"{method} warm-up")
        events, bounds, cupti = [], [], None
        for trial in range(spec.trials + (1 if cuda else 0)):
            profile = trial == spec.trials
            sets = [self.fresh() for _ in range(iters)]
            self._stage(sets, prepare=method == "prepared")
            for s in sets:
                own = [i for i, (mine, shared) in enumerate(zip(s.inputs, self.main.inputs))
                       if mine is not shared]
                s.snapshot = None if cuda else InputSnapshot(list(self.definition.inputs),
                                                             s.inputs, own)
            _, event, bound, reply = self._trial(
                method, sets, f"{method} timing trial {trial + 1}",
                refresh=True, timed=not profile, profile=profile)
            self.forget([s.id for s in sets])
            if profile:
                cupti = reply.get("cupti")
            else:
                events.append(event / iters)
                bounds.append(bound / iters)
        return _statistics(events, bounds, iters, cupti, self.phases)

    def time_graph(self, method: str, spec: TimingConfig) -> dict:
        """A graph of ``iters`` calls captured on decoy content; each replay gets fresh
        content and poisoned outputs, and is judged."""
        self._stage_stand_in()
        iters = self._iters(spec)
        buffers = [self.fresh() for _ in range(iters)]
        self._stage(buffers, prepare=method == "prepared")
        self._with_original_content(buffers)  # capture on the original content
        new = self._new(buffers)
        for handle in (self.handle, self.stand_in):
            self._request({"op": "trial", "method": "none", "ids": [], "sets": new,
                           "refresh": [b.id for b in buffers], "n_outputs": 0}, handle=handle)
        try:
            self._request({"op": "capture", "method": method, "ids": [b.id for b in buffers]},
                          self.timeout * TIMING_TIMEOUT_FACTOR)
        except Failure as failure:
            self.forget([b.id for b in buffers], graph=True)
            return {"error": failure.result.get("reason", "graph capture failed")}
        events, bounds, cupti = [], [], None
        for trial in range(spec.trials + 1):
            profile = trial == spec.trials
            for b in buffers:
                content = self.fresh()
                for mine, new_value in zip(b.inputs, content.inputs):
                    if isinstance(mine, torch.Tensor) and mine is not new_value:
                        mine.copy_(new_value)
                b.truth = content.truth
            _, event, bound, reply = self._trial("graph", buffers, f"graph replay {trial + 1}",
                                                 refresh=True, timed=not profile,
                                                 profile=profile)
            if profile:
                cupti = reply.get("cupti")
            else:
                events.append(event / iters)
                bounds.append(bound / iters)
        self.forget([b.id for b in buffers], graph=True)
        return _statistics(events, bounds, iters, cupti, self.phases)


def _statistics(events: list[float], bounds: list[float], iters: int,
                cupti: dict | None, phases: dict | None = None) -> dict:
    """Per-call times: each trial counts at the larger of the worker's event time and the
    audit's own bound, so no trial is reported shorter than the audit saw it take."""
    counted = [max(e, b) for e, b in zip(events, bounds)]
    out = {"median_ms": statistics.median(counted), "min_ms": min(counted),
           "max_ms": max(counted), "trials": len(counted), "iters": iters,
           "event_median_ms": statistics.median(events),
           "bound_median_ms": statistics.median(bounds)}
    event = out["event_median_ms"]
    out["bound_over_event"] = round(out["bound_median_ms"] / event, 3) if event > 0 else None
    if phases:
        out["phases_ms"] = phases
    if cupti is not None and "error" in cupti:
        out["cupti"] = cupti
    elif cupti is not None:
        out["cupti"] = {"kernels_per_call": cupti["kernels"] / iters,
                        "kernel_ms": cupti["kernel_ms"] / iters,
                        "span_ms": cupti["span_ms"] / iters}
    return out


def session_failure(exc: Failure | WorkerFailure) -> dict:
    if isinstance(exc, WorkerFailure):
        return {"status": exc.status, "reason": str(exc), "fatal": True}
    return exc.result
