"""A case's verdict, the one vocabulary of every record, report and failure."""

from __future__ import annotations

from enum import Enum


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
