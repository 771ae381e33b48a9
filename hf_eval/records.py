"""What the audit returns: a status per case and the record written for it.

The JSONL report holds these records one per line; :class:`CaseRecord` names the fields
every reader relies on and keeps the rest (timings, per-output errors, hashes,
environment) as they were written, so a report of an older harness still loads.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Status(str, Enum):
    """A case's verdict: FlashInfer Trace's statuses plus this project's DATA_ERROR."""

    PASSED = "PASSED"
    INCORRECT_SHAPE = "INCORRECT_SHAPE"
    INCORRECT_NUMERICAL = "INCORRECT_NUMERICAL"
    INCORRECT_DTYPE = "INCORRECT_DTYPE"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    COMPILE_ERROR = "COMPILE_ERROR"
    TIMEOUT = "TIMEOUT"
    #: The workload could not be loaded or its reference misbehaved: not the candidate's fault.
    DATA_ERROR = "DATA_ERROR"

    @property
    def candidate_failed(self) -> bool:
        """A failure the candidate is to blame for (exit code 1, where data errors give 2)."""
        return self not in (Status.PASSED, Status.DATA_ERROR)


class CaseRecord(BaseModel):
    """One line of an audit report: one solution on one workload."""

    model_config = ConfigDict(extra="allow", use_enum_values=False)

    definition: str = Field(description="the definition's name")
    workload: str = Field(description="the workload's UUID")
    solution: str = Field(description="the solution's name")
    status: Status = Field(description="the verdict")
    reason: str = Field("", description="why, for any status but PASSED: one line")
    device: str = Field("cpu", description="where the candidate ran")
    timing: dict[str, Any] = Field(default_factory=dict,
                                   description="per method (eager, prepared, graph): per-call "
                                   "milliseconds counted on the audit's own clock")

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


def exit_code(records: list[CaseRecord]) -> int:
    """0 every case passed; 1 a candidate failed; 2 bad data (or nothing was audited)."""
    if not records or any(r.status is Status.DATA_ERROR for r in records):
        return 2
    return 1 if any(r.status.candidate_failed for r in records) else 0
