"""``hf-eval serve``: the persistent audit an agent posts candidates to, and the CLI audit's
progress lines when its output is not a terminal.

One server (a real ``python -m hf_eval serve`` subprocess on port 0, on the toy dataset of
``conftest``) serves every test of this module in order; each request names its candidate
uniquely, and the last tests check that the server's report holds every record judged
here exactly once and that SIGTERM stops the server cleanly. CPU only, offline; nothing
here asserts on wall-clock time.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hf_eval.judge.report import read_report
from hf_eval.judge.serve import MAX_IN_FLIGHT
from tests.cli_kit import hf_eval, no_traceback
from tests.conftest import GOOD_SOLUTION, build_toy_root, python_path, solution_json

REPO = Path(__file__).resolve().parent.parent
DEF = "toy_linear_n8_k16"
#: The toy's three workloads (every one generated: the ``sample`` suite).
UUIDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]
#: Seconds a test waits for the server before it fails (a bound, not a measurement).
WAIT_S = 300


@dataclass
class Served:
    """The module's running server and what the tests expect its report to hold."""

    process: subprocess.Popen
    url: str
    report: Path
    stderr: Path
    #: (solution, workload) of every case a test had judged, in the order judged.
    judged: list[tuple[str, str]] = field(default_factory=list)

    @property
    def address(self) -> tuple[str, int]:
        parts = urlsplit(self.url)
        return parts.hostname, parts.port


def start_server(root: Path, report: Path, cache: Path, stderr: Path) -> tuple[
        subprocess.Popen, str]:
    """``python -m hf_eval serve --port 0`` on ``root``; the process and its URL, read
    from the one line it prints when ready."""
    env = {**os.environ, "PYTHONPATH": python_path(), "HF_EVAL_CACHE": str(cache)}
    with open(stderr, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "hf_eval", "--root", str(root), "serve", "--port", "0",
             "--report", str(report)], stdout=subprocess.PIPE, stderr=err, text=True,
            env=env, cwd=root)
    ready = process.stdout.readline()
    match = re.fullmatch(r"serving on (http://127\.0\.0\.1:\d+) \(report: (.+)\)\n", ready)
    if match is None:
        process.kill()
        raise AssertionError(f"not ready: {ready!r}; stderr: {stderr.read_text()[-2000:]}")
    assert match.group(2) == str(report)
    return process, match.group(1)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("serve")
    root = build_toy_root(base)
    report, stderr = base / "serve.jsonl", base / "serve.stderr"
    process, url = start_server(root, report, base / "cache", stderr)
    yield Served(process, url, report, stderr)
    if process.poll() is None:  # a test before the last failed: stop it anyway
        process.kill()
        process.wait(WAIT_S)


# ----------------------------------------------------------------------------- clients
@dataclass
class Answer:
    """An HTTP answer: status, headers, the body's lines (raw and parsed)."""

    status: int
    headers: dict[str, str]
    raw: list[str]

    @property
    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.raw]

    @property
    def records(self) -> list[dict]:
        return self.lines[:-1]

    @property
    def done(self) -> dict:
        return self.lines[-1]


def call(served: Served, method: str, path: str, body: bytes | None = None,
         timeout: float = WAIT_S) -> Answer:
    connection = http.client.HTTPConnection(*served.address, timeout=timeout)
    try:
        connection.request(method, path, body=body,
                           headers={"Content-Type": "application/json"} if body else {})
        response = connection.getresponse()
        raw = [line.decode().rstrip("\n") for line in response]
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                      [line for line in raw if line])
    finally:
        connection.close()


def audit(served: Served, body: dict) -> Answer:
    """POST /audit; a 200 answer's cases are added to what the report must hold."""
    answer = call(served, "POST", "/audit", json.dumps(body).encode())
    if answer.status == 200:
        served.judged += [(r["solution"], r["workload"]) for r in answer.records]
    return answer


def toy_solution(name: str) -> dict:
    return solution_json(name, GOOD_SOLUTION)


def report_lines(served: Served, solution: str) -> list[str]:
    """The report's raw lines of one solution, in file order."""
    return [line for line in served.report.read_text().splitlines()
            if json.loads(line)["solution"] == solution]


def complete(answer: Answer, solution: str, cases: int = 3) -> None:
    """A full answer: ``cases`` records of ``solution`` (each passed), then the done line."""
    assert answer.status == 200, answer.raw
    assert answer.headers["content-type"] == "application/x-ndjson"
    assert [r["solution"] for r in answer.records] == [solution] * cases
    assert {r["status"] for r in answer.records} == {"PASSED"}
    done = answer.done
    assert done["done"] is True and "error" not in done, done
    assert (done["cases"], done["passed"], done["statuses"]) == (cases, cases,
                                                                 {"PASSED": cases})
    assert done["solution"] == solution and done["definition"] == DEF
    assert isinstance(done["seconds"], float) and done["seconds"] >= 0


# ----------------------------------------------------------------------------- answers
def test_health(served):
    answer = call(served, "GET", "/health")
    assert answer.status == 200
    health = answer.lines[0]
    assert health["ok"] is True and health["device"] == "cpu"
    # the process that times candidates is not the one that parses clients' requests
    assert health["front_pid"] == served.process.pid != health["judge_pid"]
    assert health["report"] == str(served.report) and health["definitions"] == 1


def test_a_spare_worker_waits_between_requests(served):
    """The next candidate's worker is started while no request is judged."""
    deadline = time.monotonic() + WAIT_S
    while not call(served, "GET", "/health").lines[0]["spare_worker"]:
        assert time.monotonic() < deadline, "no spare worker started"
        time.sleep(0.2)
    answer = audit(served, {"definition": DEF, "uuids": UUIDS[:1], "validation_only": True,
                            "solution": toy_solution("toy_spare")})
    complete(answer, "toy_spare", cases=1)
    while not call(served, "GET", "/health").lines[0]["spare_worker"]:
        assert time.monotonic() < deadline, "no spare worker after the request"
        time.sleep(0.2)


def test_a_solution_streams_its_records_and_a_done_line_matching_the_report(served):
    answer = audit(served, {"definition": DEF, "suite": "sample",
                            "solution": toy_solution("toy_first")})
    complete(answer, "toy_first")
    assert [r["workload"] for r in answer.records] == UUIDS
    for record in answer.records:  # timed, judged, confined: the CLI audit's record
        assert record["timing"]["eager"]["median_ms"] > 0
        assert record["second_input_set"]["status"] == "PASSED"
        assert "seccomp" in record["isolation"] and record["device"] == "cpu"
    assert answer.done["report"] == str(served.report)
    # the same bytes the report holds, line for line
    assert report_lines(served, "toy_first") == answer.raw[:-1]


def test_a_second_request_reuses_the_prepared_cases(served):
    first = audit(served, {"definition": DEF, "uuids": UUIDS[1:], "validation_only": True,
                           "solution": toy_solution("toy_warm_a")})
    complete(first, "toy_warm_a", cases=2)
    second = audit(served, {"definition": DEF, "uuids": UUIDS[1:], "validation_only": True,
                            "solution": toy_solution("toy_warm_b")})
    complete(second, "toy_warm_b", cases=2)
    assert [r["reference"] for r in second.records] == [{"source": "memory",
                                                         "seconds": 0.0}] * 2
    assert all("timing" not in r for r in second.records)  # validation only
    # a new secret per request: no request's fresh content repeats another's
    secrets_seen = {r["content"]["secret_sha256"] for r in first.records + second.records}
    assert len(secrets_seen) == 2


def test_a_main_py_request_is_packaged_like_a_candidate_directory(served):
    answer = audit(served, {"definition": DEF, "suite": "sample", "validation_only": True,
                            "main_py": GOOD_SOLUTION, "name": "toy_main_py"})
    complete(answer, "toy_main_py")
    assert report_lines(served, "toy_main_py") == answer.raw[:-1]
    # without a name: candidate-<sha256 of the source>, as --candidate names a directory
    broken = audit(served, {"definition": DEF, "uuids": UUIDS[:1], "validation_only": True,
                            "main_py": "def run(:\n"})
    assert broken.status == 200
    (record,) = broken.records
    assert re.fullmatch(r"candidate-[0-9a-f]{12}", record["solution"])
    assert record["status"] == "COMPILE_ERROR" and "SyntaxError" in record["reason"]
    assert broken.done["statuses"] == {"COMPILE_ERROR": 1} and broken.done["passed"] == 0


def test_two_concurrent_clients_each_get_their_complete_answer(served):
    answers: dict[str, Answer] = {}

    def client(name: str) -> None:
        answers[name] = audit(served, {"definition": DEF, "suite": "sample",
                                       "validation_only": True,
                                       "solution": toy_solution(name)})

    threads = [threading.Thread(target=client, args=(n,)) for n in ("toy_left", "toy_right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    for name in ("toy_left", "toy_right"):
        complete(answers[name], name)
        assert report_lines(served, name) == answers[name].raw[:-1]


def test_a_client_that_leaves_mid_stream_breaks_nothing(served):
    body = json.dumps({"definition": DEF, "suite": "sample", "validation_only": True,
                       "solution": toy_solution("toy_gone")}).encode()
    with socket.create_connection(served.address, timeout=WAIT_S) as sock:
        sock.sendall(b"POST /audit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        reader = sock.makefile("rb")
        assert reader.readline().startswith(b"HTTP/1.0 200")
        while reader.readline() not in (b"\r\n", b""):  # the headers
            pass
        first = json.loads(reader.readline())
        assert first["solution"] == "toy_gone"
        reader.close()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    served.judged += [("toy_gone", u) for u in UUIDS]
    # requests are judged in order: once the next is answered, the one left is finished
    after = audit(served, {"definition": DEF, "suite": "sample", "validation_only": True,
                           "solution": toy_solution("toy_after")})
    complete(after, "toy_after")
    gone = [json.loads(line) for line in report_lines(served, "toy_gone")]
    assert [(r["workload"], r["status"]) for r in gone] == [(u, "PASSED") for u in UUIDS]


BAD_SOLUTION = {**toy_solution("toy_bad"),
                "sources": [{"path": "../main.py", "content": GOOD_SOLUTION}]}
OTHER = {**toy_solution("toy_other"), "definition": "another_definition"}
TOO_LARGE = {"definition": DEF, "main_py": "#" * (9 << 20)}
TOO_LARGE_BYTES = len(json.dumps(TOO_LARGE).encode())


def test_a_name_is_taken_by_the_first_sources_that_use_it(served):
    """Records are read by solution name: a second client cannot put other sources (a
    crashing kernel, say) under a name whose records are another's."""
    first = audit(served, {"definition": DEF, "main_py": GOOD_SOLUTION, "name": "taken_name",
                           "validation_only": True})
    complete(first, "taken_name", cases=len(first.records))
    crashing = "def run(*args):\n    raise RuntimeError('no')\n"
    answer = call(served, "POST", "/audit", json.dumps(
        {"definition": DEF, "main_py": crashing, "name": "taken_name"}).encode())
    assert answer.status == 400, answer.raw
    assert answer.lines[0]["error"].startswith(
        "solution name: 'taken_name' names other sources in this server's report (")


def test_a_refused_request_takes_no_name(served):
    """Only a request that is judged takes its name: one refused (here for a device this
    server lacks) leaves the name to whoever sends a request that is judged."""
    squat = {**toy_solution("squatted_name"), "spec": {
        **toy_solution("x")["spec"], "target_hardware": ["NVIDIA H200"]}}
    answer = call(served, "POST", "/audit", json.dumps(
        {"definition": DEF, "solution": squat}).encode())
    assert answer.status == 400, answer.raw
    assert answer.lines[0]["error"].startswith("solution.spec.target_hardware: ")
    honest = audit(served, {"definition": DEF, "main_py": GOOD_SOLUTION,
                            "name": "squatted_name", "validation_only": True})
    complete(honest, "squatted_name", cases=len(honest.records))


def test_a_body_that_never_arrives_takes_no_in_flight_slot(served):
    """Connections that announce a body and send none sit in their own reads: they hold
    none of the 16 in-flight slots, so a whole request is still judged."""
    stalled = []
    try:
        for _ in range(20):
            sock = socket.create_connection(served.address, timeout=WAIT_S)
            sock.sendall(b"POST /audit HTTP/1.0\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
            stalled.append(sock)
        answer = audit(served, {"definition": DEF, "main_py": GOOD_SOLUTION,
                                "name": "beside_stalled", "validation_only": True})
        complete(answer, "beside_stalled", cases=len(answer.records))
    finally:
        for sock in stalled:
            sock.close()


def _bytes_sent_before_closed(sock: socket.socket, data: bytes, pause_s: float) -> int:
    """Send ``data`` a byte at a time, ``pause_s`` apart; how many went out before the
    server closed the connection (``len(data)`` if it never did)."""
    sock.settimeout(pause_s)
    for index, byte in enumerate(data):
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1 << 16) == b"":
                return index
        except TimeoutError:
            continue  # still open, nothing to read: the next byte
        except (BrokenPipeError, ConnectionResetError):
            return index
    return len(data)


def test_a_request_line_that_trickles_in_is_cut_at_its_deadline(served):
    """The header deadline counts from the connection's start, however often a byte
    comes: a request line sent a byte a second is cut after about as many bytes as the
    deadline has seconds, long before it ends."""
    from hf_eval.judge.serve import HEADER_DEADLINE_S

    line = b"GET /health?" + b"x" * int(20 * HEADER_DEADLINE_S) + b" HTTP/1.0\r\n\r\n"
    with socket.create_connection(served.address, timeout=WAIT_S) as sock:
        assert _bytes_sent_before_closed(sock, line, 1.0) < 3 * HEADER_DEADLINE_S


def _locked_out_by_slow_senders(served: Served, opening: bytes, byte: bytes) -> list[int]:
    """Take every connection (and 8 more) with clients that send ``opening`` and then
    ``byte`` every half second, never finishing; the statuses of three ``/health`` calls
    made meanwhile."""
    from hf_eval.judge.serve import MAX_CONNECTIONS

    slow, stop = [], threading.Event()

    def trickle() -> None:
        while not stop.wait(0.5):
            for sock in slow:
                try:
                    sock.sendall(byte)
                except OSError:
                    pass

    feeder = threading.Thread(target=trickle, daemon=True)
    try:
        for _ in range(MAX_CONNECTIONS + 8):
            sock = socket.create_connection(served.address, timeout=WAIT_S)
            sock.sendall(opening)
            slow.append(sock)
            time.sleep(0.02)  # taken in turn (a burst overflows the listen queue)
        feeder.start()
        time.sleep(1.0)  # every slow connection has its thread now
        return [call(served, "GET", "/health").status for _ in range(3)]
    finally:
        stop.set()
        for sock in slow:
            sock.close()


def test_connections_that_never_finish_their_headers_cannot_lock_others_out(served):
    """With every connection taken by clients that keep sending header bytes and never
    finish, a new one ends the oldest of them and is answered."""
    assert _locked_out_by_slow_senders(
        served, b"GET /health HTTP/1.0\r\nX-Slow: ", b"a") == [200] * 3


@pytest.mark.parametrize("announced", ["small", "over the limit"])
def test_connections_that_never_finish_their_body_cannot_lock_others_out(served, announced):
    """The same for bodies that trickle in, whether read or drained (one over the limit
    is read and dropped before the 413): a new connection ends the oldest of them."""
    from hf_eval.judge.serve import MAX_BODY_BYTES

    size = 1000 if announced == "small" else MAX_BODY_BYTES + (1 << 20)
    opening = (b"POST /audit HTTP/1.0\r\nContent-Type: application/json\r\n"
               + f"Content-Length: {size}\r\n\r\n".encode())
    assert _locked_out_by_slow_senders(served, opening, b" ") == [200] * 3


def test_the_name_the_service_derives_is_not_for_others_to_take(served):
    """``candidate-<12 hex>`` is what the service calls a main_py sent without a name: a
    request cannot give it to other sources, so their author is never refused it."""
    import hashlib

    mine = GOOD_SOLUTION + "\n# the rightful sources\n"
    derived = "candidate-" + hashlib.sha256(mine.encode()).hexdigest()[:12]
    squat = audit(served, {"definition": DEF, "main_py": GOOD_SOLUTION, "name": derived,
                           "validation_only": True})
    assert squat.status == 400 and "has the form the service gives" in squat.lines[0]["error"]
    as_solution = call(served, "POST", "/audit", json.dumps(
        {"definition": DEF, "solution": toy_solution(derived)}).encode())
    assert as_solution.status == 400, as_solution.raw
    rightful = audit(served, {"definition": DEF, "main_py": mine, "validation_only": True})
    complete(rightful, derived, cases=len(rightful.records))


def test_headers_over_the_limit_are_not_read(served):
    with socket.create_connection(served.address, timeout=WAIT_S) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n")
        try:
            for index in range(40):  # 40 x 4 KiB, over the 64 KiB budget
                sock.sendall(f"X-Pad-{index}: {'a' * 4096}\r\n".encode())
            sock.sendall(b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: the point
        try:
            answer = sock.recv(1 << 16)
        except ConnectionResetError:
            answer = b""
    assert b"200" not in answer.split(b"\r\n")[0], answer[:200]
    assert call(served, "GET", "/health").status == 200  # and it still serves


@pytest.mark.parametrize(("body", "status", "error"), [
    (b"{", 400, "body: not JSON: "),
    (b'{"definition": ' + b"9" * 5000 + b"}", 400, "body: Exceeds the limit"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "body: nested too deeply"),
    (b"\xff\xfe{", 400, "body: not"),
    (b"[1, 2]", 400, "body: must be a JSON object (got a JSON list)"),
    (b'"text"', 400, "body: must be a JSON object (got a JSON str)"),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "bogus": 1}, 400,
     "bogus: unknown field (1 in all; the fields are: definition, suite, uuids, solution, "
     "main_py, name, validation_only)"),
    # refused before validation, which would build one error per element
    ({"definition": DEF, "main_py": GOOD_SOLUTION, **{f"k{i}": 0 for i in range(100_000)}},
     400, "k0: unknown field (100000 in all; the fields are: "),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "uuids": [0] * 5000}, 400,
     "uuids: at most 4096 workload UUIDs in one request (got 5000)"),
    ({"definition": DEF, "solution": {"name": "x", "sources": [{}] * 30_000}}, 400,
     "body: more than 20000 JSON values (one candidate's request holds far fewer)"),
    ({"main_py": GOOD_SOLUTION}, 400, "definition: is required"),
    ({"definition": "", "main_py": GOOD_SOLUTION}, 400, "definition: "),
    ({"definition": "nope", "main_py": GOOD_SOLUTION}, 400,
     "definition: unknown definition 'nope' (see 'hf-eval list definitions')"),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "solution": toy_solution("x")}, 400,
     "solution, main_py: give exactly one (solution: a Solution JSON object; main_py: the "
     "source of main.py): both were given"),
    ({"definition": DEF}, 400, "solution, main_py: give exactly one (solution: a Solution "
     "JSON object; main_py: the source of main.py): neither was given"),
    ({"definition": DEF, "solution": BAD_SOLUTION}, 400,
     "solution.sources.0.path: source path must stay inside the package (no absolute path, "
     "no '..')"),
    ({"definition": DEF, "solution": {"name": "x"}}, 400, "solution.definition: "),
    ({"definition": DEF, "solution": OTHER}, 400,
     f"solution.definition: is 'another_definition', but the request's definition is "
     f"'{DEF}'"),
    ({"definition": DEF, "solution": "main.py"}, 400, "solution: "),
    ({"definition": DEF, "main_py": 42}, 400, "main_py: "),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "suite": "weekly"}, 400, "suite: "),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "validation_only": "yes"}, 400,
     "validation_only: "),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "uuids": []}, 400, "uuids: "),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "uuids": ["abc"]}, 400,
     f"uuids: not workloads of {DEF}: 'abc'"),
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "name": "../x"}, 400, "name: "),
    ({"definition": DEF, "solution": toy_solution("x"), "name": "y"}, 400,
     "name: only with main_py (a solution names itself)"),
    (TOO_LARGE, 413, f"body: {TOO_LARGE_BYTES} bytes, over the limit of 8388608 bytes "
     "(8 MiB)"),
    (b'{"definition": "toy_linear_n8_k16", "main_py": "\\ud800"}', 400,
     "main_py: not UTF-8 text (surrogates not allowed at character 0)"),
    # a candidate's records under the name of a solution of the dataset would be read
    # as that solution's (summarize and speed-ups go by name)
    ({"definition": DEF, "main_py": GOOD_SOLUTION, "name": "torch_toy"}, 400,
     "solution name: 'torch_toy' is a solution of the dataset (audited by 'hf-eval audit', "
     "not sent to the service): choose another name (records are read by solution name)"),
    # even with its own sources (a re-timing, or an untimed record, would replace its
    # figures in summarize)
    ({"definition": DEF, "solution": toy_solution("torch_toy")}, 400,
     "solution name: 'torch_toy' is a solution of the dataset (audited by 'hf-eval audit', "
     "not sent to the service): choose another name (records are read by solution name)"),
    # a name that only looks like the baseline's (a Cyrillic o; an invisible space)
    ({"definition": DEF, "solution": toy_solution("torch_t\u043ey")}, 400,
     "solution.name: 'torch_t\u043ey' is not letters, digits, '_', '.' and '-' (a name "
     "that only looks like another's would be read as it)"),
    ({"definition": DEF, "solution": toy_solution("torch_toy\u200b")}, 400,
     "solution.name: 'torch_toy\\u200b' is not letters, digits, '_', '.' and '-' (a name "
     "that only looks like another's would be read as it)"),
], ids=["not-json", "huge-integer", "deep-nesting", "not-utf8", "list", "string",
        "unknown-field", "many-unknown-fields", "too-many-uuids",
        "too-many-values", "no-definition",
        "empty-definition", "unknown-definition", "both", "neither", "invalid-solution",
        "incomplete-solution", "other-definition", "solution-not-object", "main-py-not-text",
        "unknown-suite", "validation-only-not-bool", "no-uuids", "unknown-uuid", "bad-name",
        "name-with-solution", "too-large", "main-py-lone-surrogate", "a-dataset-name",
        "a-dataset-solution", "a-lookalike-name", "an-invisible-character"])
def test_a_malformed_request_is_refused_with_a_clear_error(served, body, status, error):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = call(served, "POST", "/audit", data)
    assert answer.status == status, answer.raw
    assert answer.headers["content-type"] == "application/json"
    (line,) = answer.lines
    assert set(line) == {"error"} and line["error"].startswith(error), line
    assert "Traceback" not in line["error"]


def test_a_refused_body_is_answered_by_the_front_end_alone(served):
    """The judge, which clocks every trial, never parses a body the rules refuse: with
    the judge stopped, such a body still gets its 400 (a flood of them can neither hold
    the judge's interpreter during another client's trial nor take the audit slots)."""
    judge = call(served, "GET", "/health").lines[0]["judge_pid"]
    blackwell = toy_solution("blackwell_only")
    blackwell["spec"]["target_hardware"] = ["NVIDIA_B200"]
    refused = {  # body -> the start of its error: the same words the judge would use
        json.dumps({"definition": DEF, **{f"k{i}": 0 for i in range(50_000)}}).encode():
            "k0: unknown field (50000 in all; ",
        json.dumps({"definition": "nope", "main_py": GOOD_SOLUTION}).encode():
            "definition: unknown definition 'nope'",
        b'{"definition": "toy_linear_n8_k16", "main_py": "\\ud800"}':
            "main_py: not UTF-8 text",
        json.dumps({"definition": DEF, "main_py": GOOD_SOLUTION,
                    "name": "torch_toy"}).encode():
            "solution name: 'torch_toy' is a solution of the dataset",
        json.dumps({"definition": DEF, "solution": OTHER}).encode():
            "solution.definition: is 'another_definition'",
        json.dumps({"definition": DEF, "main_py": ""}).encode(): "main_py: ",
        json.dumps({"definition": DEF, "main_py": "\u0000"}).encode(): "main_py: ",
        json.dumps({"definition": DEF, "main_py": GOOD_SOLUTION,
                    "uuids": ["nope"]}).encode(): f"uuids: not workloads of {DEF}: 'nope'",
        json.dumps({"definition": DEF, "main_py": GOOD_SOLUTION,
                    "suite": "fresh"}).encode(): "suite: fresh draws from the sample recipes",
        json.dumps({"definition": DEF, "solution": blackwell}).encode():
            "solution.spec.target_hardware: "}
    os.kill(judge, signal.SIGSTOP)
    try:
        # (a judge that had to read them would leave them unanswered: the socket's
        # timeout then fails the test instead of holding it)
        answers = [(error, call(served, "POST", "/audit", body, timeout=30))
                   for body, error in refused.items() for _ in range(2)]
    finally:
        os.kill(judge, signal.SIGCONT)
    assert len(answers) > MAX_IN_FLIGHT
    for error, answer in answers:
        assert answer.status == 400, answer.raw
        assert answer.lines[0]["error"].startswith(error), answer.lines
    assert call(served, "GET", "/health").status == 200


@pytest.mark.parametrize(("method", "path", "status", "error", "allow"), [
    ("GET", "/nope", 404, "path: no endpoint '/nope' (the endpoints: GET /health, POST "
     "/audit)", None),
    ("POST", "/audit/x", 404, "path: no endpoint '/audit/x'", None),
    ("GET", "/audit", 405, "method: /audit answers POST, not GET", "POST"),
    ("PUT", "/audit", 405, "method: /audit answers POST, not PUT", "POST"),
    ("POST", "/health", 405, "method: /health answers GET, not POST", "GET"),
])
def test_a_wrong_path_or_method_is_refused(served, method, path, status, error, allow):
    answer = call(served, method, path, b"{}" if method in ("POST", "PUT") else None)
    assert answer.status == status
    assert answer.lines[0]["error"].startswith(error), answer.lines
    assert answer.headers.get("allow") == allow


def test_a_body_without_its_length_is_refused(served):
    with socket.create_connection(served.address, timeout=WAIT_S) as sock:
        sock.sendall(b"POST /audit HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = sock.makefile("rb").read().decode()
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.0 411")
    assert json.loads(body) == {"error": "Content-Length: required (the JSON body's length)"}


def test_the_server_keeps_serving_after_refusals(served):
    assert call(served, "GET", "/health").lines[0]["ok"] is True
    answer = audit(served, {"definition": DEF, "uuids": UUIDS[:1], "validation_only": True,
                            "main_py": GOOD_SOLUTION, "name": "toy_still"})
    complete(answer, "toy_still", cases=1)


# ----------------------------------------------------------------------------- the end
def test_the_report_holds_every_judged_record_exactly_once(served):
    records = read_report(served.report)
    assert sorted((r["solution"], r["workload"]) for r in records) == sorted(served.judged)
    assert len(set(served.judged)) == len(served.judged)


def test_sigterm_stops_the_server_cleanly(served):
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(WAIT_S) == 0
    stderr = served.stderr.read_text()
    assert "Traceback" not in stderr, stderr[-3000:]
    assert len(read_report(served.report)) == len(served.judged)


def _connection(url: str) -> http.client.HTTPConnection:
    """A connection to the server listening at ``url``."""
    return http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port,
                                      timeout=WAIT_S)


def test_sigint_mid_request_answers_the_client_and_exits_0(tmp_path):
    root = build_toy_root(tmp_path)
    report, stderr = tmp_path / "serve.jsonl", tmp_path / "serve.stderr"
    process, url = start_server(root, report, tmp_path / "cache", stderr)
    try:
        connection = _connection(url)
        body = {"definition": DEF, "suite": "sample", "main_py": GOOD_SOLUTION,
                "name": "toy_interrupted"}
        connection.request("POST", "/audit", body=json.dumps(body).encode())
        response = connection.getresponse()
        first = json.loads(response.readline())
        process.send_signal(signal.SIGINT)
        rest = [json.loads(line) for line in response if line.strip()]
        connection.close()
        done = rest[-1]
        records = [first, *rest[:-1]]
        assert done["done"] is True and done["cases"] == len(records)
        if done["cases"] < 3:  # the case being judged is cut short, the rest not begun
            assert done["error"] == (f"the server is shutting down: {3 - done['cases']} of 3 "
                                     "case(s) not judged")
        assert process.wait(WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in stderr.read_text()
    assert [r["workload"] for r in read_report(report)] == [r["workload"] for r in records]


def test_a_stop_does_not_wait_for_a_candidate_that_imports_slowly(tmp_path):
    """SIGTERM while a candidate's import sleeps (it may take the load timeout, 120 s):
    its worker is killed, its request answered, no record written, the server gone at
    once rather than at that timeout, past a supervisor's patience."""
    root = build_toy_root(tmp_path)
    report, stderr = tmp_path / "serve.jsonl", tmp_path / "serve.stderr"
    process, url = start_server(root, report, tmp_path / "cache", stderr)
    try:
        connection = _connection(url)
        body = {"definition": DEF, "suite": "sample", "name": "toy_sleeps_at_import",
                "main_py": "import time\ntime.sleep(600)\n\n" + GOOD_SOLUTION}
        connection.request("POST", "/audit", body=json.dumps(body).encode())
        response = connection.getresponse()
        time.sleep(3.0)  # importing
        process.send_signal(signal.SIGTERM)
        lines = [json.loads(line) for line in response if line.strip()]
        connection.close()
        assert lines == [{**lines[-1], "done": True, "cases": 0,
                          "error": "the server is shutting down: 3 of 3 case(s) not judged"}]
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in stderr.read_text()
    assert read_report(report) == []


def test_a_suite_the_dataset_cannot_select_is_refused_and_the_next_request_judged(tmp_path):
    """A task whose dev list names a UUID that is no workload: a request for that suite
    gets a 400 naming the suite and the rule, and the judge goes on reading requests (the
    exception had ended its only reader, and every later request waited for ever)."""
    root = build_toy_root(tmp_path)
    task_file = root / "tasks" / f"{DEF}.json"
    task = json.loads(task_file.read_text())
    missing = "00000000-0000-5000-8000-000000000000"
    task["dev"] = [*task["dev"], missing]
    task_file.write_text(json.dumps(task))
    report, stderr = tmp_path / "serve.jsonl", tmp_path / "serve.stderr"
    process, url = start_server(root, report, tmp_path / "cache", stderr)
    try:
        served = Served(process, url, report, stderr)
        refused = audit(served, {"definition": DEF, "suite": "dev", "name": "toy_dev",
                                 "main_py": GOOD_SOLUTION})
        assert refused.status == 400, refused.raw
        error = json.loads(refused.raw[0])["error"]
        assert error.startswith(f"suite: 'dev' of {DEF} cannot be selected: ")
        assert f"dev UUID {missing} is not a workload of {DEF}" in error
        answer = audit(served, {"definition": DEF, "suite": "sample", "name": "toy_after",
                                "main_py": GOOD_SOLUTION})
        complete(answer, "toy_after")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(WAIT_S)
    assert "Traceback" not in stderr.read_text()
    assert [r["solution"] for r in read_report(report)] == ["toy_after"] * 3


# ----------------------------------------------------------------------------- the CLI audit
def test_the_cli_audit_prints_one_progress_line_per_case_when_not_a_terminal(toy_root,
                                                                             tmp_path):
    report = tmp_path / "r.jsonl"
    result = hf_eval("--root", toy_root, "audit", "--suite", "sample", "--report", report)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    records = read_report(report)
    assert len(lines) == len(records) == 3
    for number, (line, record) in enumerate(zip(lines, records), start=1):
        assert re.fullmatch(rf"\[{number}/3\] {DEF} workload {record['workload'][:8]} "
                            r"solution torch_toy: PASSED \S+ ms \(eager\)", line), line
        shown = float(line.split(": PASSED ")[1].split(" ms")[0])
        assert shown == pytest.approx(record["timing"]["eager"]["median_ms"], rel=1e-3)
    assert "Audit summary: 3/3 cases passed" in result.stdout  # the table is unchanged


def test_a_validation_only_progress_line_has_no_time(toy_root, tmp_path):
    result = hf_eval("--root", toy_root, "audit", "--suite", "first", "--validation-only",
                     "--report", tmp_path / "r.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"[1/1] {DEF} workload {UUIDS[0][:8]} solution torch_toy: PASSED"]





class _AnsweringJudge:
    """The front end's view of a judge that has an answer ready at once: a line of
    ``size`` bytes, then the last line. One in-flight slot."""

    facts = None

    def __init__(self, size: int) -> None:
        self.size = size
        self.in_flight = threading.BoundedSemaphore(1)

    def submit(self, body: bytes):
        from hf_eval.judge.serve import Answers

        answers = Answers()
        answers.put_message(("line", 0, False, json.dumps({"pad": "x" * self.size})))
        answers.put_message(("line", 0, True, json.dumps({"done": True})))
        return answers

    def streaming(self, delta: int) -> None:
        pass

    def finished(self, job) -> None:
        pass


def test_a_client_that_reads_its_answer_slowly_holds_no_audit_slot(monkeypatch):
    """The in-flight slot is the judge's: it is given back once the judge has sent the
    answer's last line, however slowly the client takes the bytes (16 clients reading a
    few hundred bytes a second kept every slot for hours while the judge was idle). The
    client then has ``ANSWER_DEADLINE_S`` to take the rest, after which its socket is
    shut."""
    from hf_eval.judge import serve
    monkeypatch.setattr(serve, "read_request", lambda body: body)
    monkeypatch.setattr(serve, "screen_request", lambda request, facts: None)
    monkeypatch.setattr(serve, "ANSWER_DEADLINE_S", 2.0)
    setup = serve.Handler.setup

    def small_buffers(handler) -> None:  # the answer then outgrows what the kernel holds
        handler.request.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        setup(handler)

    monkeypatch.setattr(serve.Handler, "setup", small_buffers)
    size = 8 << 20
    judge = _AnsweringJudge(size)
    server = serve.Server(("127.0.0.1", 0), judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    try:
        client.connect(server.server_address)
        body = b"{}"
        client.sendall(b"POST /audit HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n" + body)
        client.settimeout(WAIT_S)
        got = len(client.recv(12))  # "HTTP/1.0 200": the handler is streaming
        # Nothing more read: its write is blocked, and the slot is free all the same.
        assert judge.in_flight.acquire(timeout=10)
        judge.in_flight.release()
        time.sleep(3)  # past the deadline: the rest of the answer is cut
        while chunk := client.recv(1 << 20):
            got += len(chunk)
        assert 0 < got < size
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_the_kept_cases_are_bounded_in_number_as_well_as_in_definitions():
    """Each kept case holds descriptors and tensors: a definition of a few hundred
    workloads must not keep them all (251 kept cases ran the judge out of descriptors)."""
    from hf_eval.judge.serve import WarmCases

    kept = WarmCases(definitions=2, most=3)
    for index in range(5):
        kept.put("a", f"u{index}", f"case {index}")
    assert len(kept) == 3
    assert [kept.get("a", f"u{index}") for index in range(5)] == [
        None, None, "case 2", "case 3", "case 4"]
    kept.put("b", "v0", "case b0")
    kept.put("c", "w0", "case c0")  # a third definition: the least recent one goes
    assert kept.get("a", "u4") is None and len(kept) == 2


@pytest.mark.parametrize("tool, arguments", [
    ("serve_phases.py", ["--requests", "1"]),
    ("serve_bench.py", ["--warm", "1"]),
])
def test_the_agent_loops_benchmarks_run_on_cpu(tmp_path, tool, arguments):
    """The committed benchmarks of the agent loop (``tools/serve_phases.py``,
    ``tools/serve_bench.py``) run on this checkout's layout: each judges the dense d64 dev
    suite on CPU and prints its JSON line with every case PASSED (the seconds themselves
    are not asserted)."""
    env = {**os.environ, "PYTHONPATH": python_path(), "HF_EVAL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(REPO / "tools" / tool), "--device", "cpu",
                           *arguments], capture_output=True, text=True, env=env,
                          timeout=WAIT_S, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    statuses = [s for line in lines for s in line.get("statuses", [])]
    assert statuses and set(statuses) == {"PASSED"}, done.stdout[-2000:]
