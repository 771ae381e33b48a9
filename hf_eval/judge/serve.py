"""The persistent audit service (``hf-eval serve``): an agent's edit-audit loop, kept warm.

An agent that writes kernels audits a new candidate after every edit. ``hf-eval audit``
pays for a whole start each time: torch, the dataset's index, the fork server and the
stand-in worker, every workload's tensors and every reference. This service pays for them
once and answers each candidate over local HTTP (the standard library's
:class:`~http.server.ThreadingHTTPServer`; nothing is installed for it):

- ``GET /health``: ``{"ok": true, ...}`` (device, report, requests queued and served,
  whether a spare worker is ready).
- ``POST /audit`` with an :class:`AuditRequest` as JSON: the answer is
  ``application/x-ndjson``, streamed: one line per case record as soon as it is judged
  (the same line the report gets), then a last :class:`Done` line.

What is kept between requests: the opened dataset, one :class:`~hf_eval.judge.audit.Audit` and
its :class:`~hf_eval.judge.audit.Lane` (whose :class:`~hf_eval.isolation.workers.Isolation` keeps
the fork server and the stand-in worker, and a spare worker started between requests:
forked, behind its walls, its device and CUPTI started, no candidate code), and the
prepared cases (sealed inputs and the
reference) of the most recently audited definitions (:class:`WarmCases`); a record whose
reference was kept says so (``"reference": {"source": "memory"}``). What is not: each
request draws a new secret (:meth:`~hf_eval.judge.audit.Audit.renew_secret`), so no request's
fresh content repeats another's, and its candidate gets a fresh confined worker (the
spare, which never served another), ended when the request is answered. Each case goes
through the CLI audit's own per-unit path (:meth:`~hf_eval.judge.audit.Audit.judge_unit`), so
the records are the CLI's records.

Two processes: the front end speaks HTTP (headers, bodies, streaming answers) and the
judge (:func:`_judge_main`) holds the service and never runs HTTP code, so no client's
traffic runs in the process whose clock times a candidate; the judge reads a body only
between two audits. Requests are judged one at a time, in the order they arrive (one
audit per lane); a second client waits for its turn and gets its own complete answer.
Every record is appended to the server's JSONL report as it is judged, whether or not its
client is still reading. A request that breaks a rule is answered with an HTTP error and
``{"error": "<field>: <rule>"}``, never a traceback. SIGINT or SIGTERM ends the service:
the case being judged is cut short (its worker killed, no verdict), the requests not
fully judged are answered with an error line, the workers are ended, and :func:`serve`
returns 0. The dataset is read once, at
start: restart the service to see files changed since.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import queue
import re
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hf_eval.data.errors import DataError
from hf_eval.data.repository import Located
from hf_eval.data.schema import Definition, Solution, TaskConfig, parse
from hf_eval.data.sources import solution_from_directory, solution_hash
from hf_eval.data.suites import DEFAULT_SUITE, SUITES
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.judge.audit import Audit, AuditConfig, Case, Lane, runs_on, select_workloads
from hf_eval.judge.records import Status
from hf_eval.judge.report import (
    ReportWriter,
    environment,
    read_report,
    repair_for_resume,
    safe_text,
)
from hf_eval.samples.cases import load_cases
from hf_eval.samples.fresh import FreshRow

#: The largest request body read; a larger one is answered 413 (a candidate's source is
#: at most a few hundred kilobytes).
MAX_BODY_BYTES = 8 << 20
#: How much of a body over the limit is read and dropped before the 413 is sent, so the
#: client, still sending, reads the answer instead of a reset connection.
DRAIN_BYTES = 64 << 20
#: Definitions whose prepared cases are kept (the least recently audited goes first).
WARM_DEFINITIONS = 2
#: Prepared cases kept in all (each holds a few descriptors and its tensors): a dataset
#: of a few hundred workloads per definition keeps only this many.
WARM_CASES = 64
#: Seconds a client may take to send its request, or to take a line of the answer.
SOCKET_TIMEOUT_S = 120.0
#: Seconds a client has to take the rest of its answer once the judge has sent the
#: answer's last line (an absolute deadline: a timer then shuts the socket, however
#: slowly the bytes are read).
ANSWER_DEADLINE_S = 60.0
#: Seconds a stopping server waits for the last lines of its answers to be sent.
STREAM_DRAIN_S = 10.0
#: Audit requests in flight at once (read, queued or judged); more are answered 503, so
#: no number of clients can pile bodies up in the audit's memory. A slot is given back
#: when the judge has sent the answer's last line, not when the client has read it: a
#: client reading slowly holds only its own connection.
MAX_IN_FLIGHT = 16
#: Connections handled at once (each holds a thread). One more, when all are taken,
#: ends the connection that has been sending its request (headers or body) longest, if
#: any, and takes its place; else it is closed unread.
MAX_CONNECTIONS = 64
#: A request's line and headers: at most this many bytes, within this many seconds of
#: the connection's start (an absolute deadline: the socket is shut when it passes,
#: however the bytes trickle in).
MAX_HEADER_BYTES = 64 << 10
HEADER_DEADLINE_S = 10.0
#: A body must arrive whole within this many seconds of its first byte's request (an
#: absolute deadline too: a body sent a byte a minute would hold a connection, and once
#: held an in-flight slot, for hours).
BODY_DEADLINE_S = 60.0
#: Seconds a new connection waits for the slot of the one it ended.
EVICT_WAIT_S = 2.0
#: How often the judge process reports its state for ``/health`` (when it changed).
HEALTH_PERIOD_S = 0.5
#: What a record's ``reference.source`` says when the case was kept from an earlier request.
KEPT = "memory"
#: What a candidate's name in the records may be: ASCII letters, digits, ``_``, ``.``,
#: ``-`` (so no name can look like another's: no homoglyphs, no invisible characters).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
#: The name the service gives a ``main_py`` sent without one; no request may take it.
DERIVED_NAME = r"candidate-[0-9a-f]{12}"
#: The most workload UUIDs one request may name (a published definition has at most a few
#: hundred workloads); checked before the request's other rules, so a refused body costs
#: little of the time the service holds between audits.
MAX_UUIDS = 4096
#: The most JSON values (objects, arrays, strings, numbers...) one request body may hold:
#: a solution of the most files a package may have (1000) holds a few thousand.
MAX_JSON_VALUES = 20_000
#: The endpoints and the method each answers.
ENDPOINTS = {"/health": "GET", "/audit": "POST"}
#: The names of the endpoints, for an error message.
ENDPOINT_LIST = "GET /health, POST /audit"


# ----------------------------------------------------------------------------- requests
class AuditRequest(BaseModel):
    """The body of ``POST /audit``: one candidate for one definition, and which workloads."""

    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)

    definition: str = Field(min_length=1)
    """The definition to judge the candidate on (``hf-eval list definitions``)."""
    suite: Literal[SUITES] = DEFAULT_SUITE  # type: ignore[valid-type]
    """Which workloads, as ``hf-eval audit --suite``: ``dev`` (the task's dev UUIDs, the
    default), ``all``, ``sample``, ``first`` or ``fresh``."""
    uuids: list[str] | None = Field(None, min_length=1, max_length=MAX_UUIDS)
    """Workload UUIDs of the definition to judge on instead of the suite (as ``--uuid``);
    each must be a workload of the definition."""
    solution: dict[str, Any] | None = None
    """A FlashInfer Trace Solution JSON object, as in ``solutions/<op_type>/<name>.json``
    (its ``definition`` must be this request's); exactly one of ``solution`` and
    ``main_py``."""
    main_py: str | None = None
    """The source of a single-file candidate whose entry is ``main.py::run``, packaged as
    ``hf-eval audit --candidate`` packages a directory; exactly one of ``solution`` and
    ``main_py``."""
    name: str | None = Field(None, pattern=NAME_PATTERN)
    """The name of a ``main_py`` candidate in the records (default: ``candidate-`` and the
    first 12 hex digits of the source's SHA-256); letters, digits, ``_``, ``.``, ``-``."""
    validation_only: bool = False
    """Check correctness only, no timing (as ``--validation-only``)."""

    @model_validator(mode="after")
    def _one_candidate(self) -> AuditRequest:
        if (self.solution is None) == (self.main_py is None):
            given = "both were given" if self.solution is not None else "neither was given"
            raise ValueError(f"solution, main_py: give exactly one (solution: a Solution "
                             f"JSON object; main_py: the source of main.py): {given}")
        if self.name is not None and self.main_py is None:
            raise ValueError("name: only with main_py (a solution names itself)")
        return self


class RequestError(Exception):
    """A request the service refuses: the HTTP status and one line naming the field and
    the rule."""

    def __init__(self, status: int, message: str, allow: str | None = None) -> None:
        self.status = status
        self.message = message
        #: The method the path answers (the ``Allow`` header of a 405).
        self.allow = allow
        super().__init__(message)


def _pydantic_message(exc: ValidationError) -> str:
    """The first error of a request model's validation as ``field: rule``."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == "missing":
        rule = "is required"
    elif kind == "extra_forbidden":
        rule = ("unknown field (the fields are: "
                f"{', '.join(AuditRequest.model_fields)})")
    else:
        rule = error["msg"].removeprefix("Value error, ")
    return f"{where}: {rule}" if where else rule


def read_request(body: bytes) -> AuditRequest:
    """A request body as an :class:`AuditRequest`, or :class:`RequestError` (400) naming
    the field and the rule. It reads nothing of the service's: the front end reads every
    body first and sends the judge only those it accepts, whose second reading (between
    two audits) is then bounded by :data:`MAX_JSON_VALUES` and the body's size."""
    try:
        data = json.loads(body)
    except UnicodeDecodeError as exc:
        raise RequestError(400, f"body: not UTF-8 JSON ({exc.reason} at byte "
                           f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"body: not JSON: {exc.msg} (line {exc.lineno} column "
                           f"{exc.colno})") from None
    except RecursionError:
        raise RequestError(400, "body: nested too deeply") from None
    except ValueError as exc:  # an integer of thousands of digits, say
        raise RequestError(400, f"body: {exc}") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"body: must be a JSON object (got a JSON "
                           f"{type(data).__name__})")
    _refuse_large_shapes(data)
    try:
        return AuditRequest.model_validate(data)
    except ValidationError as exc:
        raise RequestError(400, _pydantic_message(exc)) from None


def _encoded(source: str) -> bytes:
    """A ``main_py`` as UTF-8, or a 400 naming the character that has none."""
    try:
        return source.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RequestError(400, f"main_py: not UTF-8 text ({exc.reason} at character "
                           f"{exc.start})") from None


def _allowed_name(request: AuditRequest, name: str, reserved: Collection[str]) -> None:
    """The rules of a candidate's name that need nothing but the request and the names
    the dataset reserves (the service's own record of names comes after)."""
    if re.fullmatch(DERIVED_NAME, name):
        derived = None
        if request.main_py is not None and request.name is None:
            derived = name  # the name the service gave these sources
        if name != derived:
            raise RequestError(400, f"solution name: {name!r} has the form the service "
                               "gives a main_py without a name (candidate-<the first 12 "
                               "hex digits of its sha256>): it names those sources only; "
                               "choose another name")
    if not re.fullmatch(NAME_PATTERN, name):
        raise RequestError(400, f"solution.name: {name!r} is not letters, digits, '_', '.' "
                           "and '-' (a name that only looks like another's would be read "
                           "as it)")
    if name in reserved:
        raise RequestError(400, f"solution name: {name!r} is a solution of the dataset "
                           "(audited by 'hf-eval audit', not sent to the service): choose "
                           "another name (records are read by solution name)")


@dataclass(frozen=True)
class ScreenFacts:
    """What the judge knows at start that a request can be screened against in the front
    end: every rule whose answer does not change while the service runs."""

    definitions: frozenset[str]
    """The definitions the dataset holds."""
    reserved: frozenset[str]
    """The names no request may take (the dataset's solutions, readable or not)."""
    device: str
    """The judge's device (``cpu``, ``cuda``), for a solution's target hardware."""
    uuids: dict[str, frozenset[str]]
    """Each definition's workload UUIDs."""
    suites: dict[str, frozenset[str]]
    """Each definition's suites that select at least one workload (``fresh``: those with
    sample recipes)."""


def screen_request(request: AuditRequest, facts: ScreenFacts) -> Solution:
    """The request's candidate, or :class:`RequestError` (400) for every rule that
    :class:`ScreenFacts` can answer: the definition, the candidate's packaging and name,
    its target hardware, the workloads and the suite. The front end applies it before a
    request takes an audit slot; the judge applies it again in :meth:`AuditService.admit`,
    then what needs its state (the names it judged, the dataset's problems)."""
    if request.definition not in facts.definitions:
        raise RequestError(400, f"definition: unknown definition {request.definition!r} "
                           "(see 'hf-eval list definitions')")
    solution = candidate_solution(request)
    _allowed_name(request, solution.name, facts.reserved)
    if not runs_on(solution, torch.device(facts.device)):
        raise RequestError(400, f"solution.spec.target_hardware: "
                           f"{solution.spec.target_hardware} does not include this server's "
                           f"device ({facts.device}; or 'local')")
    name = request.definition
    if request.uuids:
        unknown = [u for u in dict.fromkeys(request.uuids)
                   if u not in facts.uuids.get(name, ())]
        if unknown:
            raise RequestError(400, _unknown_uuids(name, unknown))
    elif request.suite not in facts.suites.get(name, ()):
        if request.suite == "fresh":
            raise RequestError(400, f"suite: fresh draws from the sample recipes "
                               f"(hf_eval/families/<op_type>/{name}.cases.json); {name} has none")
        raise RequestError(400, f"suite: {request.suite!r} selects no workload of {name} "
                           "(see 'hf-eval list suites')")
    return solution


def _unknown_uuids(name: str, unknown: list[str]) -> str:
    return (f"uuids: not workloads of {name}: {', '.join(map(repr, unknown[:5]))}"
            + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))


def candidate_solution(request: AuditRequest) -> Solution:
    """The request's Solution: parsed, or packaged from ``main_py`` as ``--candidate``
    packages a directory."""
    if request.solution is not None:
        try:
            solution = parse(Solution, request.solution, "solution")
        except DataError as err:
            where = f"solution.{err.field}" if err.field else "solution"
            raise RequestError(400, f"{where}: {err.rule}") from None
        if solution.definition != request.definition:
            raise RequestError(400, f"solution.definition: is {solution.definition!r}, "
                               f"but the request's definition is {request.definition!r}")
        return solution
    encoded = _encoded(request.main_py or "")
    digest = hashlib.sha256(encoded).hexdigest()[:12]
    with tempfile.TemporaryDirectory(prefix="hf-eval-serve-") as tmp:
        entry = Path(tmp) / digest / "main.py"
        entry.parent.mkdir()
        entry.write_bytes(encoded)
        try:
            solution = solution_from_directory(entry, request.definition)
        except DataError as err:
            raise RequestError(400, f"main_py: {err.rule}") from None
    update = {"description": "a candidate sent to hf-eval serve as main_py"}
    if request.name is not None:
        update["name"] = request.name
    return solution.model_copy(update=update)


def _refuse_large_shapes(data: dict) -> None:
    """Refuse, before validation, a body whose validation would list an error per element
    (unknown keys by the hundred thousand, a list of millions of UUIDs): one line for
    the first such element, in time that does not grow with the rest."""
    for key in data:
        if key not in AuditRequest.model_fields:
            unknown = sum(k not in AuditRequest.model_fields for k in data)
            raise RequestError(400, f"{key}: unknown field ({unknown} in all; the fields "
                               f"are: {', '.join(AuditRequest.model_fields)})")
    uuids = data.get("uuids")
    if isinstance(uuids, list) and len(uuids) > MAX_UUIDS:
        raise RequestError(400, f"uuids: at most {MAX_UUIDS} workload UUIDs in one request "
                           f"(got {len(uuids)})")
    values, pending = 0, [data]
    while pending:
        node = pending.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            raise RequestError(400, f"body: more than {MAX_JSON_VALUES} JSON values (one "
                               "candidate's request holds far fewer)")
        if isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


# ----------------------------------------------------------------------------- warm state
class WarmCases:
    """Prepared cases (sealed inputs and the truth) kept between requests, per
    (definition, workload UUID), for the ``definitions`` most recently audited
    definitions, at most ``most`` cases in all. Only the service's one audit thread
    touches it."""

    def __init__(self, definitions: int = WARM_DEFINITIONS, most: int = WARM_CASES) -> None:
        #: How many definitions' cases are kept.
        self.definitions = definitions
        #: How many cases are kept in all (the least recently kept goes first).
        self.most = most
        self._cases: OrderedDict[str, OrderedDict[str, Case]] = OrderedDict()

    def get(self, definition: str, uuid: str) -> Case | None:
        """The kept case, or None; its definition becomes the most recently used."""
        cases = self._cases.get(definition)
        if cases is None:
            return None
        self._cases.move_to_end(definition)
        return cases.get(uuid)

    def put(self, definition: str, uuid: str, case: Case) -> None:
        """Keep ``case``; the least recently used definition beyond the limit is dropped."""
        kept = self._cases.setdefault(definition, OrderedDict())
        kept[uuid] = case
        kept.move_to_end(uuid)
        self._cases.move_to_end(definition)
        while len(self._cases) > self.definitions:
            self._cases.popitem(last=False)
        while len(self) > self.most:
            oldest = next(iter(self._cases.values()))
            oldest.popitem(last=False)
            if not oldest:
                self._cases.popitem(last=False)

    def __len__(self) -> int:
        return sum(len(cases) for cases in self._cases.values())


class WarmLane(Lane):
    """A :class:`~hf_eval.judge.audit.Lane` that prepares each (definition, workload) once and
    lends the kept case to later requests; a fresh row (drawn from one request's secret)
    is prepared every time and never kept."""

    def __init__(self, audit: Audit, device: torch.device, cases: WarmCases) -> None:
        super().__init__(audit, device)
        #: The cases kept between requests (they outlive a lane replaced after a failure).
        self.cases = cases

    def prepare_case(self, definition: Definition, task: TaskConfig, row: Located) -> Case:
        if isinstance(row, FreshRow):
            return super().prepare_case(definition, task, row)
        uuid = row.value.workload.uuid
        case = self.cases.get(definition.name, uuid)
        if case is None:
            case = super().prepare_case(definition, task, row)
            self.cases.put(definition.name, uuid, case)
        else:  # inputs and truth as prepared before (checked after every solution)
            case.reference_source, case.reference_seconds = KEPT, 0.0
        return case


# ----------------------------------------------------------------------------- jobs
@dataclass
class Done:
    """The last line of an answer: what the request's audit found."""

    done: bool
    """Always true: the line that ends the answer."""
    definition: str
    """The definition judged."""
    solution: str
    """The candidate's name in the records."""
    cases: int
    """Case records written (and sent before this line)."""
    passed: int
    """Of those, how many PASSED."""
    statuses: dict[str, int]
    """Records per status."""
    seconds: float
    """Seconds from the start of this request's audit to this line (waiting excluded)."""
    report: str
    """The JSONL report every record was appended to."""
    error: str | None = None
    """Why the audit ended before every selected case was judged (None: it did not)."""

    def line(self) -> str:
        """The JSON line sent; ``error`` only when there is one."""
        data = asdict(self)
        if data["error"] is None:
            del data["error"]
        return json.dumps(data)


@dataclass
class Job:
    """One accepted request, waiting for or in its audit; its answer's lines are queued
    in ``lines`` for the client's handler (the audit never waits for a client)."""

    request: AuditRequest
    """The request as validated."""
    definition: Definition
    """The definition it judges on."""
    task: TaskConfig
    """The definition's task (tolerances, dev workloads, timeouts)."""
    solution: Solution
    """The candidate, parsed or packaged from ``main_py``."""
    rows: list[Located] | None
    """The workloads selected (None for the fresh suite: drawn from the request's secret)."""
    lines: queue.Queue = field(default_factory=queue.Queue)
    """The answer's lines, in order, each as (whether it is the last, the JSON line); the
    last is a :class:`Done` line."""

    def finish(self, done: Done) -> None:
        """Queue the last line."""
        self.lines.put((True, done.line()))


class AuditService:
    """The dataset, the audit and its lane, kept between requests; one thread judges the
    accepted requests in order. Build it, :meth:`start` it, :meth:`submit` validated jobs
    (:meth:`accept`), :meth:`close` it."""

    def __init__(self, root: Path, device: str, report: Path,
                 warm_definitions: int = WARM_DEFINITIONS) -> None:
        self.root = Path(root)
        self.report = Path(report)
        try:
            self.device = torch.device(device)
        except RuntimeError as exc:
            raise DataError("--device", f"not a device: {device!r} ({exc})") from None
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise DataError("--device", f"{device} asked for, but torch sees no CUDA device")
        if self.device.type not in ("cpu", "cuda"):
            raise DataError("--device", f"must be cpu or cuda[:N] (got {device!r})")
        self.dataset: Dataset = open_dataset(self.root)
        #: Things a reader should know (a report repaired before appending to it).
        self.notes: list[str] = []
        if self.report.is_file():
            self.notes += repair_for_resume(self.report)
        #: Solution names of the dataset's files that failed to load (still not free).
        self.rejected_names = {r.name for r in self.dataset.rejected if r.kind == "solution"}
        #: The rules a request is screened against, read once: the dataset does not change
        #: while the service runs (the front end gets the same facts at start).
        self.facts = self.screen_facts()
        #: Each solution name in the report, and the hash of the sources it names: a name
        #: is taken by the first sources that use it (records are read by name).
        self.names: dict[str, str] = {}
        if self.report.is_file():
            for record in read_report(self.report):
                digest = record.get("hashes", {}).get("solution")
                if isinstance(record.get("solution"), str) and isinstance(digest, str):
                    self.names.setdefault(record["solution"], digest)
        self.audit = Audit(self.dataset, AuditConfig(report=self.report,
                                                     devices=[str(self.device)]))
        self.cases = WarmCases(warm_definitions)
        self.lane = WarmLane(self.audit, self.device, self.cases)
        #: How many of the lane's notes the server's log has shown.
        self._logged_notes = 0
        self.env = environment(self.device)
        self.writer = ReportWriter(self.report, append=True)
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        #: Held while a job is judged, and taken to parse and validate a body: no
        #: client's request holds the interpreter inside another candidate's clock.
        self.judging = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="hf-eval-serve-audit",
                                        daemon=True)
        self._stopping = threading.Event()
        self._running: Job | None = None
        self._served = 0
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the stand-in worker (and so the fork server) and the first candidate's
        worker now, not in the first request, and the thread that judges requests."""
        self.lane.isolation.stand_in()
        self._spare()
        self._thread.start()

    def _spare(self) -> None:
        """Start the next candidate's worker (:meth:`Isolation.spare`) while no request is
        judged; where that fails, the next request starts its own, as the CLI does."""
        try:
            self.lane.isolation.spare()
        except Exception as exc:  # noqa: BLE001 - a request starts its own worker instead
            _log(f"error: starting a spare worker: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop: the case being judged is cut short (no verdict), requests not fully
        judged are answered with an error line, the workers are ended, the report is
        closed."""
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        # the case being judged is cut short: no verdict, and no candidate (a slow import,
        # say) holds the stop for its whole timeout
        self.audit.interrupt()
        try:
            self.lane.isolation.kill_all()
        except Exception as exc:  # noqa: BLE001 - the lane's close ends them too
            _log(f"error: ending the workers at the stop: {type(exc).__name__}: {exc}")
        self._jobs.put(None)
        if self._thread.is_alive():
            self._thread.join()
        while True:  # jobs accepted after the thread stopped
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.finish(self._done(job, Counter(), 0.0, "the server shut down before "
                                      "this request was judged"))
        self.lane.close()
        self.notes += self.lane.isolation.notes
        self.writer.close()

    def health(self) -> dict:
        """``GET /health``: whether the service is up, and what it holds."""
        return {"ok": not self._stopping.is_set(), "device": str(self.device),
                "root": str(self.root), "report": str(self.report),
                "definitions": len(self.dataset.definitions),
                "busy": self._running is not None, "queued": self._jobs.qsize(),
                "spare_worker": self.lane.isolation.spare_ready,
                "served": self._served, "warm_cases": len(self.cases)}

    # ------------------------------------------------------------------ requests
    def accept(self, body: bytes) -> Job:
        """Read a request body (:func:`read_request`) and admit it as a job
        (:meth:`admit`), between two jobs' audits, never during one (no parse holds the
        interpreter while a trial is clocked), or raise :class:`RequestError` (400)."""
        with self.judging:
            return self.admit(read_request(body))

    def admit(self, request: AuditRequest) -> Job:
        """A read request as a job, checked against the dataset and the names this server
        judged; for a caller that holds :attr:`judging`."""
        name = request.definition
        blocking = self.dataset.problems_for([name])
        if blocking:
            raise RequestError(400, f"definition: {name!r} cannot be audited: its files have "
                               f"{len(blocking)} problem(s), the first: {blocking[0]}")
        solution = screen_request(request, self.facts)
        try:
            definition, task = self.dataset.definition(name), self.dataset.task(name)
        except DataError as err:
            raise RequestError(400, f"definition: {name!r} cannot be audited: {err}") from None
        digest = solution_hash(solution)
        if self.names.get(solution.name, digest) != digest:
            raise RequestError(400, f"solution name: {solution.name!r} names other sources in "
                               f"this server's report ({self.report}): choose another name "
                               "(records are read by solution name)")
        job = Job(request, definition, task, solution, self._rows(request, task))
        self.names[solution.name] = digest  # taken only by a request that is judged
        return job

    def screen_facts(self) -> ScreenFacts:
        """What the front end screens requests against (:func:`screen_request`)."""
        uuids, suites = {}, {}
        for name in self.dataset.definitions:
            uuids[name] = frozenset(r.value.workload.uuid
                                    for r in self.dataset.workloads.get(name, []))
            selecting = set()
            for suite in SUITES:
                try:
                    if suite == "fresh":
                        recipes = load_cases(name)
                        chosen = recipes is not None and bool(recipes.cases)
                    else:
                        chosen = bool(select_workloads(self.dataset, self.dataset.task(name),
                                                       name, suite, []))
                except DataError:
                    chosen = True  # the judge names the problem
                if chosen:
                    selecting.add(suite)
            suites[name] = frozenset(selecting)
        return ScreenFacts(definitions=frozenset(self.dataset.definitions),
                           reserved=frozenset(self.dataset.solutions) | frozenset(
                               self.rejected_names),
                           device=self.device.type, uuids=uuids, suites=suites)

    def _rows(self, request: AuditRequest, task: TaskConfig) -> list[Located] | None:
        """The workloads a request selects; None for the fresh suite (drawn later, from
        the request's own secret)."""
        name = request.definition
        if request.uuids:
            known = {r.value.workload.uuid for r in self.dataset.workloads.get(name, [])}
            unknown = [u for u in dict.fromkeys(request.uuids) if u not in known]
            if unknown:
                raise RequestError(400, _unknown_uuids(name, unknown))
        if request.suite == "fresh" and not request.uuids:
            try:
                recipes = load_cases(name)
            except DataError as err:
                raise RequestError(400, f"suite: fresh: {err}") from None
            if recipes is None or not recipes.cases:
                raise RequestError(400, f"suite: fresh draws from the sample recipes (hf_eval/"
                                   f"families/<op_type>/{name}.cases.json); {name} has none")
            return None
        try:
            rows = select_workloads(self.dataset, task, name, request.suite,
                                    list(dict.fromkeys(request.uuids or [])))
        except DataError as err:  # the task's suite names what the dataset lacks, say
            raise RequestError(400, f"suite: {request.suite!r} of {name} cannot be "
                               f"selected: {err}") from None
        if request.uuids:
            return rows
        if not rows:
            raise RequestError(400, f"suite: {request.suite!r} selects no workload of {name} "
                               "(see 'hf-eval list suites')")
        return rows

    def submit(self, job: Job) -> None:
        """Queue an accepted job; its lines arrive in ``job.lines``."""
        if self._stopping.is_set():
            raise RequestError(503, "the server is shutting down")
        self._jobs.put(job)

    # ------------------------------------------------------------------ the audit thread
    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if self._stopping.is_set():
                job.finish(self._done(job, Counter(), 0.0, "the server shut down before "
                                      "this request was judged"))
                continue
            self._running = job
            try:
                with self.judging:
                    self._judge(job)
            finally:
                self._running = None
                self._served += 1
            if not self._stopping.is_set():
                self._spare()  # outside ``judging``: requests are read meanwhile

    def _done(self, job: Job, statuses: Counter, seconds: float,
              error: str | None = None) -> Done:
        return Done(done=True, definition=job.definition.name, solution=job.solution.name,
                    cases=sum(statuses.values()), passed=statuses.get(Status.PASSED.value, 0),
                    statuses=dict(sorted(statuses.items())), seconds=round(seconds, 4),
                    report=str(self.report), error=error)

    def _judge(self, job: Job) -> None:
        """Judge one job's cases through the CLI audit's per-unit path, streaming each
        record; the candidate's worker is ended after the answer's last line."""
        t0 = time.perf_counter()
        statuses: Counter = Counter()
        audit = self.audit
        audit.renew_secret()
        audit.config.validation_only = job.request.validation_only
        self.lane.isolation.shutdown()  # a fresh worker for this request's candidate

        def sink(record: dict) -> None:
            statuses[record["status"]] += 1
            job.lines.put((False, json.dumps(record, sort_keys=True)))

        error = None
        row = None
        try:
            rows = job.rows
            if rows is None:
                rows = select_workloads(self.dataset, job.task, job.definition.name,
                                        "fresh", [], audit.fresh)
            for row in rows:
                if self._stopping.is_set():
                    break
                audit.judge_unit(self.lane, (job.definition, job.task, [job.solution], row),
                                 self.env, self.writer, sink)
            if self._stopping.is_set() and error is None and sum(statuses.values()) < len(rows):
                error = (f"the server is shutting down: {len(rows) - sum(statuses.values())} "
                         f"of {len(rows)} case(s) not judged")
        except Exception as exc:  # the harness's failure, not the candidate's: no verdict
            where = (f" at workload {row.value.workload.uuid}" if row is not None else "")
            error = (f"the audit stopped{where}: {type(exc).__name__}: {exc}; the report "
                     f"holds the {sum(statuses.values())} case(s) of this request judged "
                     "before")
            _log("".join(traceback.format_exception(exc)).rstrip())
            self._replace_lane()
        finally:
            audit.records.clear()  # the report has them; a long-lived audit keeps none
        job.finish(self._done(job, statuses, time.perf_counter() - t0, error))
        try:
            self.lane.isolation.shutdown()  # no candidate outlives its request
        except Exception as exc:  # noqa: BLE001 - the next request gets a new lane
            _log(f"error: ending the candidate's worker: {type(exc).__name__}: {exc}")
            self._replace_lane()
        notes = self.lane.isolation.notes  # what the request's cases noted, as it comes
        for note in notes[self._logged_notes:]:
            _log(f"note: {note}")
        self._logged_notes = len(notes)

    def _replace_lane(self) -> None:
        """After a harness failure: end the lane's workers and start a new lane (the kept
        cases stay)."""
        try:
            self.lane.close()
        except Exception as exc:  # noqa: BLE001 - the old lane is dropped whatever it says
            _log(f"error: closing the failed lane: {type(exc).__name__}: {exc}")
        self.notes += self.lane.isolation.notes
        self.lane = WarmLane(self.audit, self.device, self.cases)
        self._logged_notes = 0


def _log(text: str) -> None:
    """One line (or a traceback) on the server's stderr, control characters escaped."""
    for line in str(text).split("\n"):
        print(safe_text(line), file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- processes
def _judge_main(root: str, device: str, report: str, bodies: Connection, control: Connection,
                lines: Connection) -> None:
    """The judge process: the :class:`AuditService` and nothing of HTTP. Bodies are read
    from ``bodies`` only between two audits (so no client's bytes are moved or parsed
    inside a clock); each job's lines, its acceptance or refusal, and the service's
    health go to ``lines``; a message on ``control`` (or the parent's end) stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the front end decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sending = threading.Lock()

    def send(message: tuple) -> None:
        with sending:
            try:
                lines.send(message)
            except OSError:  # the front end is gone: the audit finishes without it
                pass

    try:
        service = AuditService(Path(root), device, Path(report))
        service.start()
    except Exception as exc:  # noqa: BLE001 - one line for the front end to print
        send(("failed", str(exc) if isinstance(exc, DataError)
              else f"{type(exc).__name__}: {exc}"))
        return
    send(("ready", list(service.notes), service.health(), service.facts))
    stopped = threading.Event()
    relays: list[threading.Thread] = []

    def relay(job_id: int, job: Job) -> None:
        last = False
        while not last:
            last, line = job.lines.get()
            send(("line", job_id, last, line))

    def take_bodies() -> None:
        while not stopped.is_set():
            try:
                if not bodies.poll(0.5):
                    continue
                with service.judging:  # between two audits: nothing is clocked
                    job_id, body = bodies.recv()
                    try:
                        job = service.admit(read_request(body))
                        service.submit(job)
                    except RequestError as exc:
                        send(("refused", job_id, exc.status, exc.message, exc.allow))
                        continue
                    except Exception as exc:  # noqa: BLE001 - one request, never the reader
                        send(("refused", job_id, 500, "the judge could not admit the "
                              f"request: {type(exc).__name__}: {exc}", None))
                        continue
            except (EOFError, OSError):
                return
            send(("accepted", job_id))
            thread = threading.Thread(target=relay, args=(job_id, job), daemon=True)
            thread.start()
            relays.append(thread)

    def report_health() -> None:
        said = None
        while not stopped.wait(HEALTH_PERIOD_S):
            now = service.health()
            if now != said:
                send(("health", now))
                said = now

    for target in (take_bodies, report_health):
        threading.Thread(target=target, daemon=True).start()
    try:
        control.recv()
    except (EOFError, OSError):
        pass
    stopped.set()
    noted = len(service.notes)
    service.close()  # every job's last line is queued now
    for thread in relays:
        thread.join(STREAM_DRAIN_S)
    send(("closed", service.notes[noted:]))


class JudgeClient:
    """The front end's view of the judge process (:func:`_judge_main`): what the HTTP
    handlers call. It sends bodies, routes each job's lines back to its handler, and
    answers ``/health`` from the last state the judge reported."""

    def __init__(self, root: Path, device: str, report: Path) -> None:
        context = multiprocessing.get_context("spawn")
        bodies, self._bodies = context.Pipe(duplex=False)
        control, self._control = context.Pipe(duplex=False)
        self._lines, lines = context.Pipe(duplex=False)
        self.report = Path(report)
        self.process = context.Process(
            target=_judge_main, args=(str(root), device, str(report), bodies, control, lines),
            name="hf-eval-serve-judge")
        self.process.start()
        for end in (bodies, control, lines):
            end.close()
        try:
            first = self._lines.recv()
        except EOFError:
            first = ("failed", f"the judge process ended (exit {self.process.exitcode})")
        if first[0] == "failed":
            self.process.join(5)
            raise DataError("serve", first[1])
        #: Notes of the judge (a report repaired before appending, a worker slow to die).
        self.notes: list[str] = list(first[1])
        self._health: dict = first[2]
        #: What the judge read at start that the front end screens requests against.
        self.facts: ScreenFacts = first[3]
        self._stopping = threading.Event()
        self._closed = threading.Event()
        self._sending = threading.Lock()
        self._jobs: dict[int, queue.Queue] = {}
        self._next = 0
        self._lock = threading.Lock()
        #: Slots for audit requests in flight (:data:`MAX_IN_FLIGHT`).
        self.in_flight = threading.BoundedSemaphore(MAX_IN_FLIGHT)
        self._streams = 0
        self._streams_changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="hf-eval-serve-lines",
                                        daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                message = self._lines.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "health":
                self._health = message[1]
            elif kind == "closed":
                self.notes += message[1]
                self._closed.set()
            else:
                with self._lock:
                    found = self._jobs.get(message[1])
                if found is not None:
                    found.put_message(message)
        self._closed.set()
        with self._lock:  # the judge is gone: every waiting handler gets its end
            waiting, self._jobs = list(self._jobs.values()), {}
        for found in waiting:
            found.put_message(("gone",))

    def health(self) -> dict:
        """``GET /health``, from the judge's last report (no request reaches the judge)."""
        return {**self._health, "ok": not self._stopping.is_set() and self.process.is_alive(),
                "front_pid": os.getpid(), "judge_pid": self.process.pid}

    def submit(self, body: bytes) -> Answers:
        """Send a body; once the judge has read it (between two audits) it is refused
        (:class:`RequestError`) or accepted, and the returned queue then gets its lines,
        ``("line", id, last, text)``, or ``("gone",)`` if the judge ends first."""
        if self._stopping.is_set() or not self.process.is_alive():
            raise RequestError(503, "the server is shutting down")
        answers = Answers()
        with self._lock:
            job_id, self._next = self._next, self._next + 1
            self._jobs[job_id] = answers
        try:
            with self._sending:
                self._bodies.send((job_id, body))
            first = answers.get()
        except BaseException:
            with self._lock:
                self._jobs.pop(job_id, None)
            raise
        if first[0] == "gone":
            raise RequestError(503, "the server is shutting down")
        if first[0] == "refused":
            with self._lock:
                self._jobs.pop(job_id, None)
            raise RequestError(first[2], first[3], first[4])
        return answers

    def finished(self, job: Answers) -> None:
        """The handler has sent a job's last line (or its client left)."""
        with self._lock:
            for key, value in list(self._jobs.items()):
                if value is job:
                    del self._jobs[key]

    def streaming(self, delta: int) -> None:
        """Count an answer that starts (+1) or ends (-1) streaming."""
        with self._streams_changed:
            self._streams += delta
            self._streams_changed.notify_all()

    def wait_for_streams(self, timeout: float) -> bool:
        """Wait until every answer has been sent (or its client has left), at most
        ``timeout`` seconds; whether none is left."""
        with self._streams_changed:
            return self._streams_changed.wait_for(lambda: self._streams == 0, timeout)

    def close(self) -> None:
        """Stop the judge: the case being judged is cut short, requests not fully judged
        are answered with an error line, its workers end; wait for its last word."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        try:
            self._control.send(("close",))
        except OSError:
            pass
        self._closed.wait()
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class Answers(queue.Queue):
    """One job's lines as the judge sends them; :meth:`when_ended` runs a function once
    the last one (or the judge's end) has arrived, in the thread that put it."""

    def __init__(self) -> None:
        super().__init__()
        self._ended_lock = threading.Lock()
        self._ended = False
        self._on_end: list[Callable[[], None]] = []

    def put_message(self, message: tuple) -> None:
        """Queue ``message``; a last line or ``("gone",)`` ends the job."""
        self.put(message)
        if message[0] == "gone" or (message[0] == "line" and message[2]):
            with self._ended_lock:
                self._ended, todo, self._on_end = True, self._on_end, []
            for function in todo:
                function()

    def when_ended(self, function: Callable[[], None]) -> None:
        """Run ``function`` when the job ends (now, if it has)."""
        with self._ended_lock:
            if not self._ended:
                self._on_end.append(function)
                return
        function()


class _Once:
    """``function``, run at most once however often it is called."""

    def __init__(self, function: Callable[[], None]) -> None:
        self._function: Callable[[], None] | None = function
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            function, self._function = self._function, None
        if function is not None:
            function()


# ----------------------------------------------------------------------------- HTTP
class _Budget:
    """The connection's reader while the request line and headers are read: at most
    :data:`MAX_HEADER_BYTES` (the standard library alone reads up to 100 headers of 64 KiB
    each). Their deadline is the connection's timer (:class:`_Reading`)."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.left = MAX_HEADER_BYTES

    def readline(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise ConnectionAbortedError("request headers too large")
        line = self.reader.readline(min(size, self.left + 1) if size >= 0 else self.left + 1)
        self.left -= len(line)
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)


class _Reading:
    """The connections still sending their request: each has an absolute deadline, at
    which a timer shuts its socket (a blocked read then ends), and may be ended early to
    make room (:meth:`evict_oldest`, the one sending longest first). A connection whose
    request has arrived (judged, queued or answered) is never ended so."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: socket -> (when it started sending, its timer)
        self._open: dict[socket.socket, tuple[float, threading.Timer]] = {}

    def start(self, connection: socket.socket, seconds: float) -> None:
        """Shut ``connection`` in ``seconds`` unless :meth:`stop` comes first."""
        self.stop(connection)
        timer = threading.Timer(seconds, _shut, args=(connection,))
        timer.daemon = True
        with self._lock:
            self._open[connection] = (time.monotonic(), timer)
        timer.start()

    def stop(self, connection: socket.socket) -> None:
        with self._lock:
            found = self._open.pop(connection, None)
        if found is not None:
            found[1].cancel()

    def evict_oldest(self) -> bool:
        """Shut the connection that has been sending its request (headers, or a body)
        longest; False if none."""
        with self._lock:
            if not self._open:
                return False
            connection = min(self._open, key=lambda c: self._open[c][0])
        self.stop(connection)
        _shut(connection)
        return True


def _shut(connection: socket.socket) -> None:
    """End both directions of ``connection`` (a read blocked on it returns at once)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Handler(BaseHTTPRequestHandler):
    """The HTTP side: routes, reads and limits the body, streams a job's lines."""

    server: Server
    """The server that accepted the connection (set by the standard library): the service
    the handler answers from, and the deadlines of connections still sending a request."""
    server_version = "hf-eval-serve"
    #: Close-delimited answers: a streamed answer needs no length or chunking.
    protocol_version = "HTTP/1.0"
    timeout = HEADER_DEADLINE_S
    #: Whether this answer's 200 has been sent (an error can then only close it).
    _answering = False

    def setup(self) -> None:
        super().setup()
        self.rfile = _Budget(self.rfile)
        self.server.reading.start(self.connection, HEADER_DEADLINE_S)

    def finish(self) -> None:
        self.server.reading.stop(self.connection)
        super().finish()

    def do_GET(self) -> None:  # the standard library's names: do_<METHOD>
        self.server.reading.stop(self.connection)  # the headers are read
        self.rfile = self.rfile.reader  # the body has its own limits
        self.connection.settimeout(SOCKET_TIMEOUT_S)
        self._route()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_GET

    def _route(self) -> None:
        path = urlsplit(self.path).path
        try:
            method = ENDPOINTS.get(path)
            if method is None:
                raise RequestError(404, f"path: no endpoint {path!r} (the endpoints: "
                                   f"{ENDPOINT_LIST})")
            if self.command != method:
                raise RequestError(405, f"method: {path} answers {method}, not "
                                   f"{self.command}", allow=method)
            if path == "/health":
                self._send_json(200, self.server.service.health())
            else:
                self._audit()
        except RequestError as exc:
            self._send_json(exc.status, {"error": exc.message}, allow=exc.allow)
        except (ConnectionError, TimeoutError):  # the client left: nothing to answer
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a bug here never reaches the client as one
            _log("".join(traceback.format_exception(exc)).rstrip())
            self.close_connection = True
            if self._answering:  # the 200 and some lines are out: only closing is left
                return
            try:
                self._send_json(500, {"error": f"internal error: {type(exc).__name__}: "
                                      f"{safe_text(exc)}"})
            except (ConnectionError, TimeoutError):
                pass

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise RequestError(411, "Content-Length: required (a chunked body is not read)")
        length = self.headers.get("Content-Length")
        if length is None:
            raise RequestError(411, "Content-Length: required (the JSON body's length)")
        try:
            size = int(length)
            if size < 0:
                raise ValueError
        except ValueError:
            raise RequestError(400, f"Content-Length: must be a whole number of bytes "
                               f"(got {safe_text(length)!r})") from None
        # The body (or the drain of one over the limit) must arrive within an absolute
        # deadline; each read waits only for what is left of it, a timer shuts the socket
        # when it passes, and until then the connection may be evicted like one still
        # sending its headers (a body sent in one go is read in milliseconds).
        over = size > MAX_BODY_BYTES
        want = min(size, DRAIN_BYTES) if over else size
        deadline = time.monotonic() + BODY_DEADLINE_S
        chunks, got = [], 0
        self.server.reading.start(self.connection, BODY_DEADLINE_S)
        try:
            while got < want:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                chunk = self.rfile.read1(min(want - got, 1 << 16))
                if not chunk:
                    break
                if not over:  # one over the limit is read and dropped (the client then
                    chunks.append(chunk)  # reads the answer, not a reset connection)
                got += len(chunk)
        except (TimeoutError, OSError):
            if time.monotonic() < deadline or over:
                raise  # the client left, or a drain ran out of time: nothing to answer
            raise RequestError(408, f"body: {got} of the {size} bytes arrived in "
                               f"{BODY_DEADLINE_S:.0f} s") from None
        finally:
            self.server.reading.stop(self.connection)
        if over:
            raise RequestError(413, f"body: {size} bytes, over the limit of "
                               f"{MAX_BODY_BYTES} bytes ({MAX_BODY_BYTES >> 20} MiB)")
        self.connection.settimeout(SOCKET_TIMEOUT_S)
        if got != size:
            raise RequestError(400, f"body: {got} of the {size} bytes Content-Length "
                               "announced arrived")
        return b"".join(chunks)

    def _audit(self) -> None:
        service = self.server.service
        body = self._body()  # whole, before it may take a slot
        # Read and screened here, in the front end, which clocks nothing: a body the rules
        # refuse never reaches the judge (whose parse, between two audits, is then
        # bounded) nor holds a slot while an audit runs.
        screen_request(read_request(body), service.facts)
        if not service.in_flight.acquire(blocking=False):
            raise RequestError(503, f"busy: {MAX_IN_FLIGHT} audit requests are in flight; "
                               "send this one again when one has been answered")
        release = _Once(service.in_flight.release)
        try:
            answers = service.submit(body)
            # The slot is the judge's: given back with the answer's last line, however
            # slowly the client reads it; the client then has ANSWER_DEADLINE_S to take
            # the rest before its socket is shut.
            deadline = threading.Timer(ANSWER_DEADLINE_S, _shut, args=(self.connection,))
            deadline.daemon = True
            answers.when_ended(release)
            answers.when_ended(deadline.start)
            service.streaming(+1)
            try:
                self._stream(answers)
            finally:
                deadline.cancel()
                service.streaming(-1)
                service.finished(answers)
        finally:
            release()

    def _stream(self, answers: Answers) -> None:
        self._answering = True
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        last = False
        while not last:  # a write to a client that left raises: the job goes on without it
            message = answers.get()
            if message[0] == "gone":
                last, line = True, json.dumps(
                    {"done": True, "error": "the judge process ended before this answer did"})
            else:
                last, line = message[2], message[3]
            self.wfile.write(line.encode() + b"\n")
            self.wfile.flush()

    def _send_json(self, status: int, data: dict, allow: str | None = None) -> None:
        body = json.dumps(data).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The standard library's own refusals (a malformed request line, an unknown
        method) as JSON, like every other error."""
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._send_json(code, {"error": f"request: {message or phrase}"})

    def log_message(self, format: str, *args: Any) -> None:
        _log(f"{self.address_string()} {format % args}")


class Server(ThreadingHTTPServer):
    """The HTTP server, holding the service its handlers answer from."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: JudgeClient) -> None:
        #: What every handler answers from.
        self.service = service
        #: Connections being handled (:data:`MAX_CONNECTIONS`).
        self.connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        #: Connections still sending their request (headers, or a body), with deadlines.
        self.reading = _Reading()
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, at most :data:`MAX_CONNECTIONS`; one more ends the
        connection that has been sending its request longest and takes its slot, or is
        closed unread where none is."""
        if not self.connections.acquire(blocking=False):
            if not (self.reading.evict_oldest()
                    and self.connections.acquire(timeout=EVICT_WAIT_S)):
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-request is not an error of the server; anything else is
        one line on stderr (the server keeps serving)."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        _log(f"error: serving {client_address}: {type(exc).__name__}: {exc}")


def serve(root: Path, report: Path, host: str = "127.0.0.1", port: int = 0,
          device: str = "cpu", on_ready: Callable[[str], None] | None = None,
          on_note: Callable[[str], None] | None = None) -> int:
    """Run the service until SIGINT or SIGTERM; 0 after a clean stop.

    ``on_ready`` gets the URL once the service answers; ``on_note`` each note (a report
    repaired before appending, a worker slow to die). A second signal while stopping
    raises :class:`KeyboardInterrupt`.
    """
    service = JudgeClient(root, device, report)
    note = on_note or (lambda text: None)
    for text in service.notes:
        note(text)
    try:
        server = Server((host, port), service)
    except OSError as exc:
        service.close()
        raise DataError("--port", f"cannot listen on {host}:{port}: {exc.strerror}") from None
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    listener = threading.Thread(target=server.serve_forever, name="hf-eval-serve-http",
                                daemon=True)
    try:
        listener.start()
        bound_host, bound_port = server.server_address[:2]
        if on_ready is not None:
            on_ready(f"http://{bound_host}:{bound_port}")
        while not stop.wait(0.5):
            pass
    finally:
        if listener.is_alive():  # shutdown() waits for a loop that must be running
            server.shutdown()
        noted = len(service.notes)
        service.close()  # every answer has its last line queued now
        service.wait_for_streams(STREAM_DRAIN_S)
        server.server_close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for text in service.notes[noted:]:
            note(text)
    return 0
