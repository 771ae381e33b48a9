"""What the audit returns: a status per case and the record written for it.

The JSONL report holds these records one per line; :class:`CaseRecord` names the fields
every reader relies on and keeps the rest (per-output errors, environment, reference
source) as they were written, so a report of an older harness still loads.

:func:`validate_record` is the one check a record passes before it is written
(:class:`hf_eval.judge.report.ReportWriter`) and after it is read (:mod:`hf_eval.judge.report`'s
readers): a record that breaks a rule raises :class:`RecordError`, whose message names the
field and the rule on one line.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hf_eval.data.status import Status


class CaseRecord(BaseModel):
    """One line of an audit report: one solution on one workload.

    Build one from a dict with :func:`validate_record`, which names the broken rule;
    unknown keys are kept as written.
    """

    model_config = ConfigDict(extra="allow", use_enum_values=False,
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
    timing: dict[str, dict[str, Any]] = Field(default_factory=dict)
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
    ``baseline_timed`` ``call``, ``launch`` or null; ``hashes`` an object of strings.
    Other keys are kept as they are.
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
