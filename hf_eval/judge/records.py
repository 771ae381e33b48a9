"""What the audit returns: a status per case and the record written for it.

The JSONL report holds these records one per line. :class:`CaseRecord` declares every
field this harness writes, with its parts typed (:class:`MethodTiming` per timing method,
:class:`OutputPart` per output, :class:`ContentPart`, :class:`ReferencePart`,
:class:`CheckPart`, :class:`FlagsPart`, :class:`FreshPart`), and the few keys older
harnesses wrote that it no longer does (marked "older reports"), so their reports still
load and dump unchanged. Any other key is an error.

:func:`validate_record` is the one check a record passes before it is written
(:class:`hf_eval.judge.report.ReportWriter`) and after it is read (:mod:`hf_eval.judge.report`'s
readers): a record that breaks a rule raises :class:`RecordError`, whose message names the
field and the rule on one line.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer
from typing_extensions import TypedDict

from hf_eval.data.status import Status

#: How a record's parts are read: every key declared, none other allowed.
_PART = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class OutputPart(TypedDict, total=False):
    """One output's verdict in a record (:class:`hf_eval.judge.acceptance.OutputVerdict`)."""

    __pydantic_config__ = _PART
    name: str
    """The output's name in the definition."""
    passed: bool
    """Whether the output is accepted."""
    status: str
    """Its verdict: PASSED, INCORRECT_SHAPE, INCORRECT_DTYPE or INCORRECT_NUMERICAL."""
    reason: str
    """Why it failed, one line; empty when it passed."""
    numel: int
    """Elements compared."""
    mismatched: int
    """Elements outside the tolerance (or different, where exact)."""
    matched_ratio: float
    """``(numel - mismatched) / numel``."""
    max_absolute_error: float
    """The largest ``|a - r|`` over elements whose inputs are finite."""
    max_relative_error: float
    """The largest ``|a - r| / (|r| + 1e-8)`` over elements whose inputs are finite."""
    non_finite: int
    """Elements where the candidate or the reference is NaN or infinite."""
    rule: str
    """The acceptance rule of the definition's family that judged it, where one did."""


class MethodTiming(TypedDict, total=False):
    """One timing method of a record (``timing.<method>``), per call, in milliseconds
    (:func:`hf_eval.judge.trials.summarise`)."""

    __pydantic_config__ = _PART
    median_ms: float
    """The reported figure: the median of the counted trials."""
    median_us: float
    """The same in microseconds (the published report's unit)."""
    min_ms: float
    """The fastest counted trial."""
    max_ms: float
    """The slowest counted trial."""
    trials: int
    """Timed trials."""
    iters: int
    """Calls per trial (each on content of its own)."""
    calls: str
    """What each call was: ``eager calls`` or ``graph replay``."""
    l2: str
    """``flushed`` (the cold method: the L2 cache evicted before the calls) or ``as
    revealed``."""
    clock: str
    """What measured the device time: CUDA events, the worker's clock on CPU, or
    ``cupti-span`` where CUPTI saw work off the timed stream."""
    device_median_ms: float
    """The median of the device times the worker claimed."""
    host_median_ms: float
    """The median of the audit's host times less the stand-in's floor."""
    flagged: int
    """Trials whose host time the device time did not explain (the guard)."""
    allowance_trials: int
    """Trials in which a judged call needed the timed-call allowance."""
    extra_trials: int
    """Trials run beyond the task's because at least half of the earlier ones were
    flagged (at most :data:`hf_eval.judge.trials.GUARD_RETRIES`): counted like the
    others, they give the median a chance at trials the host's own noise spared."""
    host_implied_ms: float
    """The median over trials of the device time each trial's host time implies (each
    trial counts at least its own)."""
    guard_slack_ms: float
    """The guard's slack per call (the median over trials)."""
    output_copy_ms: float
    """Per call, what the stand-in spent copying its outputs into the lent slots (the
    median over trials of its cheapest run): the time a candidate that switched off the
    worker's own checks could fill with work no timer sees (``docs/verdicts.md``, "What
    remains")."""
    counted_trials_ms: list[float]
    """Every trial as counted."""
    device_trials_ms: list[float]
    """Every trial's device time."""
    host_trials_ms: list[float]
    """Every trial's host time."""
    phases_ms: list[dict[str, Any]] | dict[str, Any]
    """Per trial, where the request's time went, a diagnostic (one object for all trials
    in records of older harnesses). ``candidate_inputs``, ``_calls``, ``_outputs`` and
    ``_gated`` and the first of ``slots_pinned`` are the candidate's worker's claims;
    ``candidate_wall``, ``candidate_reply``, ``candidate_take``, the ``stand_in_*`` runs
    and the floor are the audit's own clock; ``candidate_at`` and ``stand_in_at`` are when
    each request was sent (wall clock, epoch seconds), to read a stall against the host's
    own counters at that moment."""
    cupti: dict[str, Any]
    """CUPTI's view of the profiled trial (span, kernel time, activities per call, whether
    work ran off the timed stream), or its error."""
    event_median_ms: float
    """(Older reports) The median of the worker's event times: ``device_median_ms`` now."""
    event_trials_ms: list[float]
    """(Older reports) Every trial's event time: ``device_trials_ms`` now."""
    bound_median_ms: float
    """(Older reports) The median of the audit's bound per trial (its host time less the
    floor), which a trial counted at when the events fell below it."""
    bound_over_event: float
    """(Older reports) ``bound_median_ms / event_median_ms``."""


class ContentPart(TypedDict, total=False):
    """What fresh content a case judged (``content``)."""

    __pydantic_config__ = _PART
    fresh_sets: int
    """Distinct fresh input sets drawn for the case."""
    undecided_rows: int
    """Rows the acceptance rules could not decide on fresh content."""
    fresh_calls_judged: int
    """Calls on fresh content whose outputs were judged."""
    fresh_calls_allowed: int
    """Of those, the ones that passed through the timed-call allowance."""
    secret_sha256: str
    """SHA-256 of the audit's secret (the secret itself is never written)."""
    timed_calls_judged: int
    """(Older reports) Timed calls judged with the allowance's rules: ``fresh_calls_judged``
    now, which counts the second input set too."""
    timed_calls_allowed: int
    """(Older reports) Of those, the ones the allowance passed: ``fresh_calls_allowed``
    now."""


class ReferencePart(TypedDict, total=False):
    """Where the case's reference outputs came from (``reference``)."""

    __pydantic_config__ = _PART
    source: str
    """``computed``, ``cache`` or the file they were read from."""
    seconds: float
    """Seconds it took to have them."""
    shared: bool
    """(An audit spread over a Ray cluster) True when they were computed once for the
    workload, by one lane, and handed to this case's unit through Ray's object store
    (a workload whose solutions were split over lanes); absent when the unit computed
    its own."""


class CheckPart(TypedDict, total=False):
    """The verdict of one more check of a case (``second_input_set``, ``scale_probe``)."""

    __pydantic_config__ = _PART
    status: str
    """PASSED, or the failure's status."""
    changed: bool
    """(second input set) Whether the fresh content differed from the workload's own."""
    reason: str | None
    """Why it failed; empty or null when it passed."""


class FlagsPart(TypedDict, total=False):
    """How the audit was asked to run (``flags``)."""

    __pydantic_config__ = _PART
    validation_only: bool
    """No timing: the first call and the second input set only."""
    strict_diagnostic: bool
    """The task's diagnostic tolerance judged too."""
    scale_probe: bool
    """The scale probe ran."""


class FreshPart(TypedDict, total=False):
    """(A fresh row) The recipe its inputs were drawn from (``fresh``)."""

    __pydantic_config__ = _PART
    recipe: str
    """The generator's case label."""
    seed_sha256: str
    """SHA-256 of the row's seed (the seed itself is never written)."""


#: The fields a record has always been written with; any other is written only when set.
_ALWAYS = frozenset({"definition", "workload", "solution", "status", "reason", "device",
                     "timing", "baseline", "baseline_timed", "hashes"})


class CaseRecord(BaseModel):
    """One line of an audit report: one solution on one workload.

    Build one from a dict with :func:`validate_record`, which names the broken rule. Every
    field this harness writes is declared, its parts typed (:class:`MethodTiming`,
    :class:`OutputPart`, :class:`ContentPart`, ...); no other key is allowed.
    """

    model_config = ConfigDict(extra="forbid", use_enum_values=False,
                              use_attribute_docstrings=True)

    definition: str = Field(min_length=1)
    """The definition's name (``definitions/<op_type>/<name>.json``)."""
    workload: str = Field(min_length=1)
    """The workload's UUID."""
    solution: str = Field(min_length=1)
    """The solution's name."""
    status: Status
    """The verdict."""
    reason: str = ""
    """Why, for any status but PASSED: one line; empty when the case passed."""
    device: str = Field("cpu", min_length=1)
    """Where the candidate ran: ``cpu`` or ``cuda:N``."""
    timing: dict[str, MethodTiming] = Field(default_factory=dict)
    """Per method (``cold`` and ``graph`` on CUDA, ``eager`` and ``prepared`` on CPU or
    where no graph could be captured): per-call milliseconds (``median_ms``, ``min_ms``,
    ...), each trial counted at its device time, or at the audit's host time where the
    guard flagged it; the median also in microseconds (``median_us``, the published
    report's unit; absent from records of older harnesses). :func:`reported_time` picks
    the one figure every command reports. Empty for a validation-only audit, for a
    case that did not pass, and for a workload that cannot be given fresh content (its
    record's ``timing_refused`` says why)."""
    baseline: str | None = None
    """The task's baseline solution, the one speed-ups are paired against."""
    baseline_timed: Literal["call", "launch"] | None = None
    """How the task times its baseline: ``call`` (each call) or ``launch`` (after
    ``prepare``, so the ``prepared`` method pairs with it)."""
    hashes: dict[str, str] = Field(default_factory=dict)
    """SHA-256 of the sources judged: ``definition``, ``task`` and ``solution``
    (:func:`hf_eval.data.sources.solution_hash`); ``--resume`` skips a case whose hashes it
    holds."""

    axes: dict[str, int] | None = None
    """The workload's variable axes."""
    environment: dict[str, Any] | None = None
    """Python, torch, platform, CPU count, device (and GPU, CUDA), git commit: what a reader
    needs to reproduce or compare a timing."""
    flags: FlagsPart | None = None
    """How the audit was asked to run."""
    fresh: FreshPart | None = None
    """(A fresh row) The recipe its inputs were drawn from."""
    reference: ReferencePart | None = None
    """Where the reference outputs came from."""
    wall_seconds: float | None = None
    """Seconds this case took on the audit's clock."""
    outputs: list[OutputPart] | None = None
    """The first call's verdict per output."""
    diagnostic: list[OutputPart] | None = None
    """(``audit --strict-diagnostic``) The first call's outputs judged under the task's
    ``diagnostic_tolerance`` as well: reported, never the verdict."""
    setup_ms: dict[str, float] | None = None
    """Setup outside the call time, in ms: the worker's start and load, the first call,
    ``prepare``, capture, warm-up, the profiler's start."""
    second_input_set: CheckPart | None = None
    """Fresh content in the workload's own buffers, called once."""
    scale_probe: CheckPart | None = None
    """(``audit --scale-probe``) One call on scaled inputs."""
    content: ContentPart | None = None
    """What fresh content the case judged."""
    isolation: list[str] | None = None
    """The walls the candidate's worker got, and how it started."""
    timing_refused: str | None = None
    """Why the case was not timed (no input that fresh content can vary)."""
    graph_capture_error: str | None = None
    """(CUDA) Why no graph could be captured: eager calls were timed instead."""
    traceback: str | None = None
    """(COMPILE_ERROR, RUNTIME_ERROR) The candidate's traceback, cut short."""
    placement: dict[str, Any] | None = None
    """(An audit spread over a Ray cluster) Where the case's lane ran: node, process,
    accelerators, temporary folder."""
    inputs_reloaded: list[Any] | None = None
    """Inputs of the case found changed after the solution and reloaded (never expected:
    the worker maps sealed copies)."""

    @model_serializer(mode="wrap")
    def _as_written(self, handler):
        """The record as it was written: a field this harness added later appears only
        where the record has it."""
        data = handler(self)
        return {k: v for k, v in data.items()
                if k in _ALWAYS or k in self.model_fields_set}

    @property
    def passed(self) -> bool:
        """Whether the verdict is PASSED."""
        return self.status is Status.PASSED


class RecordError(ValueError):
    """A record that breaks a rule of :class:`CaseRecord`; ``str()`` is one line,
    ``<field>: <rule> (got <value>)``."""

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")


#: The longest shown form of an offending value in a :class:`RecordError`.
_SHOWN = 60
_STATUS_VALUES = frozenset(s.value for s in Status)
_STATUSES = ", ".join(s.value for s in Status)
_MISSING = object()


def _got(value: Any) -> str:
    """An offending value as a rule shows it: its ``repr`` (control characters escaped,
    one line), cut to ``_SHOWN`` characters, or ``missing``."""
    if value is _MISSING:
        return "missing"
    shown = repr(value)
    return "got " + (shown if len(shown) <= _SHOWN else shown[:_SHOWN - 3] + "...")


def _name(data: dict, field: str, *, required: bool = True) -> None:
    value = data.get(field, _MISSING)
    if value is _MISSING and not required:
        return
    if not isinstance(value, str) or not value:
        raise RecordError(field, f"must be a non-empty string ({_got(value)})")


def _key(name: str) -> str:
    """A key of the record as a field name shows it: as written when it is an
    identifier, else its ``repr`` (so no key brings control characters into a message)."""
    return name if name.isidentifier() else repr(name)


def _timing(value: Any) -> None:
    if not isinstance(value, dict):
        raise RecordError("timing", f"must be an object of timing methods ({_got(value)})")
    for method, timed in value.items():
        if not isinstance(timed, dict):
            raise RecordError(f"timing.{_key(method)}", f"must be an object ({_got(timed)})")
        median = timed.get("median_ms", _MISSING)
        micro = timed.get("median_us", _MISSING)
        if median is not _MISSING and not _duration(median):
            raise RecordError(f"timing.{_key(method)}.median_ms",
                              f"must be a finite number of milliseconds >= 0 ({_got(median)})")
        if micro is _MISSING:
            continue
        if median is _MISSING:
            raise RecordError(f"timing.{_key(method)}.median_us",
                              f"comes with median_ms, which is missing ({_got(micro)})")
        if not _duration(micro) or micro != median * 1000:
            raise RecordError(f"timing.{_key(method)}.median_us",
                              f"must be median_ms * 1000 = {median * 1000!r} ({_got(micro)})")


def _duration(value: Any) -> bool:
    """A finite number >= 0 (not a bool)."""
    return (not isinstance(value, bool) and isinstance(value, int | float)
            and math.isfinite(value) and value >= 0)


def validate_record(data: Any) -> CaseRecord:
    """``data`` as a :class:`CaseRecord`, or a :class:`RecordError` naming the first
    broken rule.

    The rules: a JSON object; ``definition``, ``workload`` and ``solution`` non-empty
    strings; ``status`` one of :class:`Status`'s values; ``reason`` (when present) a
    string; ``device`` a non-empty string; ``timing`` an object whose methods are objects,
    each ``median_ms`` a finite number >= 0 and each ``median_us`` (when present) exactly
    ``median_ms * 1000``; ``baseline`` a non-empty string or null;
    ``baseline_timed`` ``call``, ``launch`` or null; ``hashes`` an object of strings;
    every key, and every key of a typed part, declared (an undeclared one is named).
    """
    if not isinstance(data, dict):
        raise RecordError("record", f"must be a JSON object (got {type(data).__name__})")
    for field in ("definition", "workload", "solution"):
        _name(data, field)
    status = data.get("status", _MISSING)
    if isinstance(status, Status):
        status = status.value
    if not isinstance(status, str) or status not in _STATUS_VALUES:
        raise RecordError("status", f"must be one of {_STATUSES} ({_got(status)})")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise RecordError("reason", f"must be a string ({_got(reason)})")
    _name(data, "device", required=False)
    if "timing" in data:
        _timing(data["timing"])
    if data.get("baseline") is not None:
        _name(data, "baseline")
    if data.get("baseline_timed") not in (None, "call", "launch"):
        raise RecordError("baseline_timed",
                          f"must be call, launch or null ({_got(data['baseline_timed'])})")
    hashes = data.get("hashes", {})
    if not isinstance(hashes, dict) or not all(isinstance(v, str) for v in hashes.values()):
        raise RecordError("hashes", f"must be an object of strings ({_got(hashes)})")
    try:
        return CaseRecord.model_validate(data)
    except ValidationError as exc:  # a rule of the model the checks above do not spell out
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "record"
        raise RecordError(field, error["msg"]) from None


#: The timed methods a record's one reported time comes from, first present first: the
#: CUDA graph replayed with the L2 cache overwritten (inputs not L2-resident, as real
#: decode inputs are not), the published method (the same graph, inputs as revealed),
#: prepared launches, eager calls.
REPORTED_ORDER = ("cold", "graph", "prepared", "eager")


def method_ms(record: dict | CaseRecord, method: str) -> float | None:
    """A record's median milliseconds per call by ``method``, when it is a positive
    finite number (a zero time has no ratio and no logarithm: it counts as not timed)."""
    timing = record.timing if isinstance(record, CaseRecord) else record.get("timing")
    value = timing.get(method) if isinstance(timing, dict) else None
    value = value.get("median_ms") if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def reported_time(record: dict | CaseRecord,
                  methods: tuple[str, ...] = REPORTED_ORDER) -> tuple[str, float] | None:
    """The one time every command reports for a record: (method, median ms per call) of
    the first of ``methods`` it was timed by, or None."""
    for method in methods:
        ms = method_ms(record, method)
        if ms is not None:
            return method, ms
    return None


def exit_code(records: list[CaseRecord]) -> int:
    """0 every case passed; 1 a candidate failed; 2 bad data (or nothing was audited)."""
    if not records or any(r.status is Status.DATA_ERROR for r in records):
        return 2
    return 1 if any(r.status.candidate_failed for r in records) else 0
