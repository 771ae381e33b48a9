"""The boundary's parts on their own: what a reply may say, one live candidate worker per
lane, and a worker's end taking everything it started with it."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from hf_eval.data import memory
from hf_eval.data.sources import solution_from_directory
from hf_eval.isolation import protocol
from hf_eval.isolation.limits import available
from hf_eval.isolation.workers import Isolation, WorkerFailure
from hf_eval.judge.records import Status
from tests.adversarial_kit import copy_candidate

HERE = Path(__file__).parent / "adversarial"
DEFINITION = "toy_linear_n8_k16"
needs_groups = pytest.mark.skipif(not available(), reason="needs root and cgroup v1")


# ----------------------------------------------------------------------------- protocol
def test_a_served_reply_is_read_field_by_field():
    reply = protocol.parse({"ok": True, "nonce": "n", "event_ms": 1.5,
                            "outputs": [[None, {"dtype": "float32", "shape": [2, 3]}]],
                            "walls": ["pidns"], "changed": [["s1", 0]]}, "n")
    assert reply.error is None and reply.event_ms == 1.5 and reply.walls == ("pidns",)
    assert reply.outputs[0][0] is None
    assert reply.outputs[0][1] == protocol.Mismatch(torch.float32, (2, 3))
    assert reply.changed == (("s1", 0),)


def test_a_failed_reply_is_only_an_error_text():
    reply = protocol.parse({"ok": False, "nonce": "n", "error": "PASSED"}, "n")
    assert reply.error == "PASSED"  # the candidate's words; the caller makes it a failure


@pytest.mark.parametrize("raw, rule", [
    ({"ok": True, "nonce": "n", "status": "PASSED"}, r"unknown field\(s\) \['status'\]"),
    ({"ok": True, "nonce": "other"}, "without the request's nonce"),
    ({"ok": "yes", "nonce": "n"}, "without a boolean 'ok'"),
    ({"ok": False, "nonce": "n"}, "without an error text"),
    ({"ok": True, "nonce": "n", "error": "x"}, "a served reply with an error text"),
    # a served reply that carries the worker's real reply, a refusal, as a text it never
    # reads: refused, whatever the text
    ({"ok": True, "nonce": "n", "outputs": [[None]],
      "traceback": '{"ok": false, "error": "harness integrity"}'},
     "a served reply with an error text or a traceback"),
    ({"ok": False, "nonce": "n", "error": "x", "outputs": [[None]]},
     r"a failed reply with a served reply's field\(s\) \['outputs'\]"),
    ({"ok": True, "nonce": "n", "event_ms": math.nan}, "event_ms is not a number of ms"),
    ({"ok": True, "nonce": "n", "event_ms": -1.0}, "event_ms is not a number of ms"),
    ({"ok": True, "nonce": "n", "event_ms": 1.7e308}, "event_ms is not a number of ms"),
    ({"ok": True, "nonce": "n", "event_ms": math.inf}, "event_ms is not a number of ms"),
    ({"ok": True, "nonce": "n", "outputs": [[{"dtype": "os.system", "shape": [1]}]]},
     "names no dtype"),
    ({"ok": True, "nonce": "n", "outputs": [[{"dtype": "float32", "shape": [-1]}]]},
     "shape is not a list of sizes"),
    ({"ok": True, "nonce": "n", "outputs": [[{"dtype": "float32", "shape": [1] * 17}]]},
     "shape is not a list of sizes"),
    (["ok"], "not a mapping"),
])
def test_anything_else_is_refused(raw, rule):
    with pytest.raises(protocol.ProtocolError, match=rule):
        protocol.parse(raw, "n")


def test_a_dtype_named_in_a_reply_imports_nothing_into_the_audit():
    """A reply's dtype is read from a fixed table: the name of one of torch's lazily
    imported submodules (which ``getattr(torch, name)`` would import into the audit's
    own process, seconds and tens of MB) is no dtype, and nothing is imported."""

    script = ("import sys, torch\n"
              "from hf_eval.isolation import protocol\n"
              "before = '_inductor' in dir(torch) or 'torch._inductor' in sys.modules\n"
              "for name in ('_inductor', '_dynamo', 'onnx'):\n"
              "    raw = {'ok': True, 'nonce': 'n', 'outputs': [[{'dtype': name, 'shape': [1]}]]}\n"
              "    try:\n"
              "        protocol.parse(raw, 'n')\n"
              "    except protocol.ProtocolError as exc:\n"
              "        assert 'names no dtype' in str(exc), exc\n"
              "    else:\n"
              "        raise AssertionError(name)\n"
              "print(before, sorted(m for m in ('torch._inductor', 'torch._dynamo', 'torch.onnx')"
              " if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False []", out
    reply = protocol.parse({"ok": True, "nonce": "n",
                            "outputs": [[{"dtype": "bfloat16", "shape": [2]}]]}, "n")
    assert reply.outputs[0][0] == protocol.Mismatch(torch.bfloat16, (2,))


def test_candidate_text_is_bounded():
    reply = protocol.parse({"ok": False, "nonce": "n", "error": "x" * 10**6}, "n")
    assert len(reply.error) == protocol.MAX_TEXT


def test_an_error_is_one_line_whatever_the_exception_does():
    """The worker names a failure in one line, even for an exception whose text raises,
    whose class name spans lines (no identifier: quoted, as the candidate's text), or whose
    metaclass hides its name."""
    from hf_eval.isolation.server import _one_line

    class Hidden(type):
        @property
        def __name__(cls):
            raise RuntimeError("no name")

    class Masked(Exception, metaclass=Hidden):
        def __str__(self):
            raise RuntimeError("no text")

    lines = type("Forged\nPASSED | 1.0 ms", (Exception,), {"__str__": lambda self: 1 / 0})
    assert _one_line(ValueError("first\nsecond")) == "ValueError: first"
    assert _one_line(lines()) == "'Forged\\nPASSED | 1.0 ms'"
    assert _one_line(type("DATA_ERROR: x", (Exception,), {})("y")) == "'DATA_ERROR: x': y"
    assert _one_line(type("DATA_ERROR", (Exception,), {})("y")) == "'DATA_ERROR': y"
    assert _one_line(type("\uff48arness", (Exception,), {})("y")) == "'\uff48arness': y"
    assert _one_line(Masked()) == "Masked"


# ----------------------------------------------------------------- built-in type tables
_TABLE_PROBE = """
import gc, sys
from hf_eval.isolation import server
real = gc.get_referents(vars(complex))[0]
original = real["conjugate"]


def site(c):
    return c.conjugate()


for _ in range(2000):  # specialised: the site caches the entry under the type's version
    site(1j)
assert server._restore_type_tables() is False
real["conjugate"] = lambda self: "theirs"
server._type_modified(complex)  # as the candidate's PyType_Modified would
assert site(1j) == "theirs"
assert server._restore_type_tables() is True
assert real["conjugate"] is original and site(1j) == -1j
"""


def test_a_built_in_types_table_is_put_back_and_its_callers_look_again():
    """A method replaced in a built-in type's real table and cached by a specialised call
    site (the type's version renewed, as ``PyType_Modified`` does) is put back, and the
    site calls the original again: the restore renews the version with no ctypes."""
    done = subprocess.run([sys.executable, "-c", _TABLE_PROBE], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_key_that_is_not_a_str_is_taken_out_unhashed():
    """A key of another class in a built-in type's table, with a name's hash and an
    ``__eq__`` that says yes, is never hashed or compared by the restore: the table is
    emptied and refilled from what was taken at import, and the change reported."""
    probe = _TABLE_PROBE + """
calls = []


class Key:
    armed = False

    def __hash__(self):
        if Key.armed:
            calls.append("hash")
        return hash("real")

    def __eq__(self, other):
        if Key.armed:
            calls.append("eq")
        return Key.armed


key = Key()
real[key] = None
Key.armed = True
assert server._restore_type_tables() is True
Key.armed = False
assert calls == [], calls
assert not any(type(k) is not str for k in list(real)) and real["real"] is not None
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------------- workers
def _solution(name: str, tmp: Path):
    package = copy_candidate(HERE / name, tmp / name)
    return solution_from_directory(package / "main.py", DEFINITION)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:\t")[1][0]
    except (OSError, IndexError):
        return "gone"


UNIFIED = Path("/sys/fs/cgroup/unified")  # cgroup v2 beside v1 (a hybrid host)


@pytest.fixture(params=["host", "v2"])
def hierarchy(request, monkeypatch):
    """Worker groups in the host's own hierarchy, or in a cgroup v2 one: the hybrid
    host's unified mount stands in for a v2-only host (no controllers delegated, so
    freezing and killing only, and the per-process limits for the caps)."""
    if request.param == "host":
        yield "host"
        return
    from hf_eval.isolation import limits

    if limits._unified():
        pytest.skip("the host's own hierarchy is cgroup v2: the 'host' case covers it")
    if os.geteuid() != 0 or not (UNIFIED / "cgroup.procs").exists():
        pytest.skip("no cgroup v2 hierarchy to stand in")

    parent = UNIFIED / f"hf-eval-test-{os.getpid()}"
    parent.mkdir(exist_ok=True)
    monkeypatch.setattr(limits, "ROOT", UNIFIED)
    monkeypatch.setattr(limits, "_unified", lambda: True)
    monkeypatch.setattr(limits, "_own_group", lambda controller: parent)
    try:
        yield "v2"
    finally:
        for child in parent.iterdir():
            if child.is_dir():
                child.rmdir()
        parent.rmdir()


@pytest.fixture
def isolation():
    """A CPU lane's isolation, closed after the test whatever happened."""
    lane = Isolation(torch.device("cpu"))
    yield lane
    lane.close()


@needs_groups
def test_a_lane_keeps_one_candidate_worker_alive(tmp_path, hierarchy, isolation):
    first, loaded = isolation.worker(_solution("honest", tmp_path), 10.0)
    assert loaded.error is None
    group = first.group
    second, _ = isolation.worker(_solution("slow_honest", tmp_path), 10.0)
    assert not first.alive()
    assert all(not path.exists() for path in group.paths.values())  # emptied, removed
    assert second.alive()
    assert list(isolation.workers) == [second.solution_key]


def test_a_spare_worker_serves_the_next_new_solution_and_no_other(tmp_path, isolation):
    isolation.spare()
    spare = isolation._spare
    assert isolation.spare_ready and spare.alive()
    assert "seccomp" in spare.walls  # behind its walls before any candidate is known
    first, loaded = isolation.worker(_solution("honest", tmp_path), 10.0)
    assert first is spare and loaded.error is None and loaded.walls == spare.walls
    assert not isolation.spare_ready  # taken: never offered again
    second, loaded = isolation.worker(_solution("slow_honest", tmp_path), 10.0)
    assert second is not spare and loaded.error is None
    assert not spare.alive()  # the first candidate's worker ended with its solution


def test_a_start_cut_short_leaves_no_worker_behind(monkeypatch):
    """Ctrl-C while a worker starts (here: while it is asked for its walls) ends the
    process, removes its private directory and gives its uid back."""
    from hf_eval.isolation import workers

    started = {}
    original = workers.WorkerHandle.request

    def interrupted(self, message, timeout):
        started.update(private=self.private, process=self.process, uid=self.uid)
        raise KeyboardInterrupt

    monkeypatch.setattr(workers.WorkerHandle, "request", interrupted)
    with pytest.raises(KeyboardInterrupt):
        workers.WorkerHandle(None, torch.device("cpu"))
    monkeypatch.setattr(workers.WorkerHandle, "request", original)
    assert started["process"].poll() is not None  # ended
    assert not started["private"].exists()
    if started["uid"] is not None:  # its lease is given back: its lock can be taken
        import fcntl

        lock = workers.UID_LOCK_DIRECTORY / f"hf_eval-uid-{started['uid']}.lock"
        with open(lock, "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.mark.skipif(os.geteuid() != 0, reason="worker uids are leased only as root")
def test_uid_leases_are_machine_wide_whatever_tmpdir_says(tmp_path, monkeypatch):
    """Two audits run with different TMPDIRs still lease uids from one folder, so neither
    can take (and reap) a uid whose worker belongs to the other."""
    import tempfile

    from hf_eval.isolation import workers

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = workers.UidLease()
    try:
        assert (workers.UID_LOCK_DIRECTORY / f"hf_eval-uid-{first.uid}.lock").exists()
        assert not list(tmp_path.glob("hf_eval-uid-*"))
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "elsewhere"))
        second = workers.UidLease()
        try:
            assert second.uid != first.uid
        finally:
            second.release()
    finally:
        first.release()


@pytest.mark.skipif(os.geteuid() != 0, reason="worker uids are leased only as root")
def test_a_uid_whose_leftovers_are_still_dying_is_passed_over(tmp_path, monkeypatch):
    """A lock file nobody holds whose uid still has processes that survive SIGKILL (a
    dead audit's worker, still dying) costs that uid, not the audit: the lease takes the
    next, waits for that uid's reap only once in a process, and is refused only when no
    uid is left (with the reason)."""
    from hf_eval.isolation import walls as sandbox
    from hf_eval.isolation import workers

    monkeypatch.setattr(workers, "UID_LOCK_DIRECTORY", tmp_path)
    monkeypatch.setattr(workers, "_UNREAPED", set())
    dying = sandbox.worker_uid(0)
    reaped: list[int] = []

    def reap(uid):
        reaped.append(uid)
        if uid == dying:
            raise sandbox.SandboxError(f"processes of uid {uid} survived SIGKILL")

    monkeypatch.setattr(sandbox, "reap", reap)
    for _ in range(2):
        lease = workers.UidLease()
        try:
            assert lease.uid == sandbox.worker_uid(1)
        finally:
            lease.release()
    assert reaped == [dying, lease.uid, lease.uid]  # the dying uid waited for once only
    monkeypatch.setattr(workers, "_UNREAPED", set())
    monkeypatch.setattr(workers, "UID_SLOTS", 1)
    with pytest.raises(sandbox.SandboxError, match="in use .processes of uid .* survived"):
        workers.UidLease()


def test_a_dead_spare_is_replaced_and_every_spare_ends_with_the_lane(tmp_path):
    lane = Isolation(torch.device("cpu"))
    try:
        lane.spare()
        dead = lane._spare
        dead.kill()
        handle, loaded = lane.worker(_solution("honest", tmp_path), 10.0)
        assert handle is not dead and handle.alive() and loaded.error is None
        lane.spare()
        waiting = lane._spare
        assert waiting.alive() and waiting is not handle
    finally:
        lane.close()
    assert not waiting.alive() and not handle.alive() and lane._spare is None


@needs_groups
def test_ending_a_worker_ends_everything_it_started(tmp_path, hierarchy, isolation):
    handle, _ = isolation.worker(_solution("leave_process", tmp_path), 10.0)
    group = handle.group
    x, w = torch.randn(1, 16).bfloat16(), torch.randn(8, 16).bfloat16()
    handle.request({"op": "register", "sets": {"s": [x, w, 0.5]}}, 10.0)
    slots = [[memory.empty((1, 8), torch.bfloat16, worker_writable=True),
              memory.empty((1,), torch.int64, worker_writable=True)]]
    handle.request({"op": "slots", "slots": slots}, 10.0)
    reply, _ = handle.request({"op": "trial", "method": "eager", "ids": ["s"],
                               "n_outputs": 2}, 10.0)
    assert reply.error is None
    assert len(group.members()) >= 3  # outer, inner, and the detached `sleep`
    members = group.members()
    isolation.discard(handle.solution_key)
    assert all(not Path(f"/proc/{pid}").exists() or _state(pid) == "Z" for pid in members)
    assert all(not path.exists() for path in group.paths.values())


@needs_groups
def test_a_frozen_worker_runs_nothing_until_thawed(tmp_path, hierarchy, isolation):
    handle, loaded = isolation.worker(_solution("honest", tmp_path), 10.0)
    if hierarchy == "v2":  # no controller delegated: per-process limits instead
        assert handle.group.unified and "memory-cap" not in loaded.walls, loaded.walls
        assert "rlimit-as" in loaded.walls and "rlimit-nproc" in loaded.walls
    assert handle.freeze()
    states = {Path(f"/proc/{pid}/status").read_text().split("State:\t")[1][0]
              for pid in handle.group.members()}
    assert states <= {"D", "S"}, states  # frozen tasks sleep in the freezer
    handle.thaw()
    reply, _ = handle.request({"op": "null"}, 10.0)
    assert reply.error is None


@needs_groups
def test_a_stalled_worker_is_a_timeout_within_the_deadline(tmp_path, hierarchy, isolation):
    handle, _ = isolation.worker(_solution("honest", tmp_path), 10.0)
    handle.freeze()  # it cannot answer at all now
    started = time.monotonic()
    with pytest.raises(WorkerFailure) as caught:
        handle.request({"op": "null"}, 1.0)
    assert caught.value.status is Status.TIMEOUT
    assert time.monotonic() - started < 10
    assert not handle.alive()


def test_the_worker_limits_read_the_environment(monkeypatch):
    from hf_eval.isolation.limits import Limits

    monkeypatch.setenv("HF_EVAL_WORKER_MEMORY", "2G")
    monkeypatch.setenv("HF_EVAL_WORKER_DISK", "512M")
    monkeypatch.setenv("HF_EVAL_WORKER_PIDS", "99")
    limits = Limits.from_environment()
    assert (limits.memory_bytes, limits.private_bytes, limits.pids) == (2 << 30, 512 << 20, 99)
    monkeypatch.setenv("HF_EVAL_WORKER_MEMORY", "lots")
    with pytest.raises(ValueError, match="HF_EVAL_WORKER_MEMORY='lots': not a size"):
        Limits.from_environment()


def test_no_group_is_made_without_root():
    if os.geteuid() == 0:
        pytest.skip("runs as root here")
    assert not available()


def test_without_a_group_per_process_limits_hold(tmp_path, monkeypatch):
    """Where no group can cap memory or processes (cgroup v2 without delegated
    controllers), a CPU worker's address space and its uid's processes are limited."""
    from hf_eval.dataset import open_dataset
    from hf_eval.isolation import limits
    from hf_eval.judge.audit import Audit, AuditConfig
    from tests.conftest import build_toy_root

    monkeypatch.setattr(limits.Group, "create", classmethod(lambda cls, limits: None))
    monkeypatch.setenv("HF_EVAL_WORKER_MEMORY", "1G")
    monkeypatch.setenv("HF_EVAL_WORKER_PIDS", "256")
    root = build_toy_root(tmp_path, call_timeout_s=10.0)
    names = ["exhaust_memory", "fork_bomb", "honest"]
    records = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first",
        extra_solutions=[_solution(n, tmp_path) for n in names])).run()
    got = {r.solution.removeprefix("candidate-"): r for r in records}
    assert got["exhaust_memory"].status is Status.RUNTIME_ERROR
    assert "can't allocate memory" in got["exhaust_memory"].reason
    assert got["honest"].status is Status.PASSED
    walls = got["honest"].model_dump()["isolation"]
    assert "oom-first" in walls and "rlimit-as" in walls and "cgroup" not in walls
    if os.geteuid() == 0:
        assert got["fork_bomb"].status is Status.RUNTIME_ERROR
        assert "Resource temporarily unavailable" in got["fork_bomb"].reason
        assert "rlimit-nproc" in walls


def test_each_session_draws_its_own_fresh_content():
    """Two candidates audited on one case never get the same content: what one worker
    learns (and leaves in any channel the host keeps) is worth nothing to the next."""
    from hf_eval.judge.trials import InputSet, Session

    class Toy:
        op_type = "toy"

    inputs = [torch.randn(4, 16), torch.randn(8, 16), 0.5]
    drawn = []
    for _ in range(2):
        session = Session(handle=None, stand_in_worker=None, definition=Toy(), task=None,
                          device=torch.device("cpu"), main=InputSet("m", inputs, ()),
                          reference=None, secret=b"the audit's secret", timeout=1.0)
        drawn.append(session.fresh())
    assert drawn[0].id != drawn[1].id
    assert not torch.equal(drawn[0].inputs[0], drawn[1].inputs[0])


@needs_groups
def test_a_worker_slow_to_die_never_stops_the_audit(tmp_path, monkeypatch):
    """A killed worker whose processes are still dying (a teardown of gigabytes of page
    tables) is left to finish with its uid and group held; the next candidate is
    audited, and the report's notes say so."""
    from hf_eval.dataset import open_dataset
    from hf_eval.isolation import limits
    from hf_eval.judge.audit import Audit, AuditConfig
    from tests.conftest import build_toy_root

    real_kill = limits.Group.kill
    slow = []

    def kill(self, timeout=5.0):
        ended = real_kill(self, timeout)
        if timeout > 1.0 and not slow:  # the first worker's end: "still dying"
            slow.append(self)
            return False
        return ended

    monkeypatch.setattr(limits.Group, "kill", kill)
    root = build_toy_root(tmp_path, call_timeout_s=10.0)
    first, second = _solution("honest", tmp_path), _solution("slow_honest", tmp_path)
    audit = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first", validation_only=True,
        extra_solutions=[first, second]))
    records = audit.run()
    assert [r.status for r in records] == [Status.PASSED, Status.PASSED]
    assert any("still dying" in note for note in audit.notes), audit.notes
    assert slow and all(not p.exists() for p in slow[0].paths.values())  # ended at last


def test_the_end_of_one_solutions_worker_is_in_no_other_solutions_record(tmp_path,
                                                                          monkeypatch):
    """The worker of the solution audited before is ended before the next solution's
    clock starts: its end (up to END_TIMEOUT_S for a candidate slow to die) is in neither
    the next record's load time nor its wall seconds. The audit's clock is made to jump
    by 1000 s while a candidate's worker ends, so where that end is counted shows."""
    from hf_eval.dataset import open_dataset
    from hf_eval.judge import audit as audit_module
    from hf_eval.judge.audit import Audit, AuditConfig
    from tests.conftest import build_toy_root

    jumped = [0.0]

    class Clock:
        def __getattr__(self, name):
            return getattr(time, name)

        def perf_counter(self):
            return time.perf_counter() + jumped[0]

    real_end = Isolation._end

    def end(self, handle, what):
        real_end(self, handle, what)
        if what.startswith("solution "):
            jumped[0] += 1000.0

    monkeypatch.setattr(audit_module, "time", Clock())
    monkeypatch.setattr(Isolation, "_end", end)
    root = build_toy_root(tmp_path)
    first, second = _solution("honest", tmp_path), _solution("slow_honest", tmp_path)
    audit = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first",
        extra_solutions=[first, second]))
    records = audit.run()
    assert [r.status for r in records] == [Status.PASSED, Status.PASSED]
    assert jumped[0] >= 1000.0  # the first worker was ended before the second loaded
    for record in records:
        assert record.wall_seconds < 1000.0
        assert record.setup_ms["load"] < 1000.0 * 1e3


@needs_groups
def test_the_groups_of_dead_audits_are_swept(hierarchy):
    from hf_eval.isolation import limits

    parents = limits._parents()
    dead = 2 ** 22 + 12345  # above any pid this kernel hands out (pid_max <= 2**22)
    stale = [parent / f"hf-eval-worker-{dead}-0000" for parent in parents.values()]
    live = [parent / f"hf-eval-worker-{os.getpid()}-0000" for parent in parents.values()]
    for path in stale + live:
        path.mkdir()
    try:
        assert limits.sweep(parents) == len(stale)
        assert not any(p.exists() for p in stale) and all(p.exists() for p in live)
    finally:
        for path in stale + live:
            if path.exists():
                path.rmdir()


def test_a_worker_that_does_not_freeze_fails(tmp_path, monkeypatch):
    """Threads held in the kernel (MADV_POPULATE_READ over a huge mapping) can keep a
    worker from freezing while the stand-in is timed: the candidate fails, so nothing it
    runs meanwhile can inflate the cost subtracted from its own time."""
    from hf_eval.dataset import open_dataset
    from hf_eval.isolation import workers
    from hf_eval.judge.audit import Audit, AuditConfig
    from tests.conftest import build_toy_root

    monkeypatch.setattr(workers.WorkerHandle, "freeze", lambda self, timeout: False)
    root = build_toy_root(tmp_path, call_timeout_s=10.0)
    [record] = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first",
        extra_solutions=[_solution("honest", tmp_path)])).run()
    assert record.status is Status.RUNTIME_ERROR
    assert record.reason == ("the worker's processes did not stop within 1 s when frozen "
                             "(while the stand-in was timed)")


def test_the_waits_for_a_worker_to_freeze_count_against_the_cases_budget(tmp_path,
                                                                         monkeypatch):
    """A worker whose processes take long to freeze (one held in the kernel) holds the
    audit while the stand-in waits: those waits are charged to the case's budget (three
    call timeouts), so they cannot stretch a case past it."""
    import time

    from hf_eval.dataset import open_dataset
    from hf_eval.isolation import workers
    from hf_eval.judge.audit import Audit, AuditConfig
    from hf_eval.judge.trials import CASE_BUDGET_FACTOR, FREEZE_TIMEOUT_S
    from tests.conftest import build_toy_root

    waits = []

    def slow_freeze(self, timeout):
        waits.append(timeout)
        time.sleep(timeout)  # frozen at the last moment it is allowed
        return True

    monkeypatch.setattr(workers.WorkerHandle, "freeze", slow_freeze)
    timeout = 0.5  # a budget of 1.5 s: the CPU's two timed trials wait 1 s and 0.5 s
    root = build_toy_root(tmp_path, call_timeout_s=timeout)
    [record] = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first",
        extra_solutions=[_solution("honest", tmp_path)])).run()
    assert record.status is Status.TIMEOUT, record.reason
    assert record.reason == (
        "the case's requests to the worker, and the waits for its processes to stop, took "
        f"more than {CASE_BUDGET_FACTOR * timeout:.0f} s in all ({CASE_BUDGET_FACTOR} times "
        "the task's call timeout)")
    assert waits[0] == FREEZE_TIMEOUT_S and len(waits) == 2 and waits[1] < 0.5, waits


@needs_groups
def test_the_worker_group_has_the_lowest_cpu_weight(tmp_path, hierarchy, isolation):
    """A candidate's busy processes (each in a session of its own) share one group whose
    CPU weight is the lowest, so they cannot starve the audit's own work."""
    handle, loaded = isolation.worker(_solution("honest", tmp_path), 10.0)
    if "cpu-weight" not in loaded.walls:
        pytest.skip(f"no CPU controller for worker groups here ({hierarchy})")
    if handle.group.unified:
        assert (handle.group.paths[""] / "cpu.weight").read_text().strip() == "1"
    else:
        assert (handle.group.paths["cpu"] / "cpu.shares").read_text().strip() == "2"


def test_a_stand_in_that_fails_only_beside_a_candidate_is_that_candidates_failure(
        tmp_path, monkeypatch):
    """The stand-in cannot start while a candidate's worker lives (a host resource that
    candidate holds, say the open-file table), and starts once that worker is ended: the
    candidate's RUNTIME_ERROR, not a stopped audit; the next candidate is judged as ever.
    Failing with no candidate alive too, it is the harness's failure: the audit stops."""
    from hf_eval.dataset import open_dataset
    from hf_eval.isolation import workers
    from hf_eval.judge.audit import Audit, AuditAborted, AuditConfig
    from tests.conftest import build_toy_root

    root = build_toy_root(tmp_path, call_timeout_s=10.0)
    original = workers.Isolation.stand_in

    def fails_beside_the_first_candidate(self):
        if any(k for k in self.workers) and not getattr(self, "_blamed", False):
            self._blamed = True
            raise workers.StandInFailed("the stand-in worker failed: OSError: [Errno 23] "
                                        "Too many open files in system")
        return original(self)

    monkeypatch.setattr(workers.Isolation, "stand_in", fails_beside_the_first_candidate)
    records = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="first",
        extra_solutions=[_solution(n, tmp_path) for n in ("honest", "slow_honest")])).run()
    got = {r.solution.removeprefix("candidate-"): r for r in records}
    assert got["honest"].status is Status.RUNTIME_ERROR
    assert got["honest"].reason == (
        "the stand-in worker failed: OSError: [Errno 23] Too many open files in system "
        "while this candidate's worker lived; it started once that worker was ended")
    assert got["slow_honest"].status is Status.PASSED

    def always_fails(self):
        raise workers.StandInFailed("the stand-in worker failed: no import")

    monkeypatch.setattr(workers.Isolation, "stand_in", always_fails)
    with pytest.raises(AuditAborted, match="the stand-in worker failed: no import"):
        Audit(open_dataset(root), AuditConfig(
            report=tmp_path / "r2.jsonl", solutions="none", suite="first",
            extra_solutions=[_solution("honest", tmp_path / "2")])).run()


def test_the_candidates_process_dies_with_the_outer_one(tmp_path, isolation):
    """The outer process killed alone (no group kill): the candidate's process, the first
    of its PID namespace, dies with it. Its parent-death signal, which a uid change
    clears, is set again after the uid drop."""
    handle, loaded = isolation.worker(_solution("honest", tmp_path), 10.0)
    assert loaded.error is None
    outer = handle.process.pid
    inner = [int(p.parent.name) for p in Path("/proc").glob("[0-9]*/stat")
             if _parent(p) == outer]
    assert inner, "the outer process has no child"
    os.kill(outer, 9)
    deadline = time.monotonic() + 30
    while any(_state(p) not in ("gone", "Z", "X") for p in inner):
        assert time.monotonic() < deadline, f"still alive: {inner}"
        time.sleep(0.05)


def _parent(stat_file: Path) -> int | None:
    try:
        return int(stat_file.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def test_the_default_caps_bound_the_kernel_memory_epoll_keeps_outside_a_group(monkeypatch):
    """An epoll instance holds 256 bytes no cgroup charges, and every thread may own a
    descriptor table: the default process cap times the descriptor bound keeps that under
    128 MiB a worker."""
    from hf_eval.isolation import walls
    from hf_eval.isolation.limits import Limits

    monkeypatch.delenv("HF_EVAL_WORKER_PIDS", raising=False)
    assert Limits.from_environment().pids * walls.WORKER_FILES * 256 <= 128 << 20


def test_a_group_is_emptied_of_its_memory_before_it_is_removed(tmp_path):
    """Page cache charged to a group would keep it alive after its removal: the memory is
    reclaimed first (v1 ``memory.force_empty``, v2 ``memory.reclaim``)."""
    from hf_eval.isolation.limits import Group, Limits

    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    for folder, name in ((v1, "memory.force_empty"), (v2, "memory.reclaim")):
        folder.mkdir()
        (folder / name).write_text("")
    Group({"memory": v1, "pids": tmp_path / "none"}, Limits(0, 0, 0, 0), unified=False).remove()
    Group({"": v2}, Limits(0, 0, 0, 0), unified=True).remove()
    assert (v1 / "memory.force_empty").read_text() == "0"
    assert int((v2 / "memory.reclaim").read_text()) >= 1 << 30


def test_the_spawner_ends_every_worker_though_each_end_is_reaped_meanwhile(monkeypatch):
    """When the audit goes away the spawner ends all its workers; its reaper, which
    drops each worker that exits from the same table, may run while it does. Every
    worker still ends (a table changed under the loop once stopped it after the first)."""
    import subprocess

    from hf_eval.isolation import spawner

    workers = [subprocess.Popen(["sleep", "60"]) for _ in range(3)]
    children = {w.pid: [] for w in workers}

    def reap(*_: object) -> None:
        for worker in workers:
            if worker.poll() is not None:
                children.pop(worker.pid, None)

    real_kill = os.kill

    def kill_and_wait(pid: int, number: int) -> None:  # each end is seen at once
        real_kill(pid, number)
        time.sleep(0.2)

    monkeypatch.setattr(spawner.os, "kill", kill_and_wait)
    previous = signal.signal(signal.SIGCHLD, reap)
    try:
        spawner._end_all(children)
        monkeypatch.undo()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})  # the reaper runs now
        assert [w.wait(timeout=10) for w in workers] == [-signal.SIGKILL] * 3
    finally:
        signal.signal(signal.SIGCHLD, previous)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        for worker in workers:
            worker.kill()
            worker.wait()


# ----------------------------------------------------------------------------- the gate
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_the_trials_cuda_calls_are_torchs_c_functions_and_time_the_stream():
    """What a trial calls on CUDA is bound to torch's C functions and C types: the stream
    they name is the current one, and events recorded through them time a sleep kernel
    of a known length (about 1 ms at the H200's clock, well above 0.1 ms), whatever the
    Python class ``torch.cuda.Event`` says its ``elapsed_time`` is."""
    from hf_eval.isolation import server

    stream, data = server._current_stream()
    assert server._stream_pointer(stream) == torch.cuda.current_stream().cuda_stream
    assert data[0] == torch.cuda.current_stream().stream_id
    start = server._EventBase(enable_timing=True)
    end = server._EventBase(enable_timing=True)
    forged = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, other: 0.0
    try:
        server._event_record(start, stream)
        server._cuda_sleep(2_000_000)
        server._event_record(end, stream)
        server._cuda_synchronize()
        elapsed = server._event_elapsed(start, end)
    finally:
        torch.cuda.Event.elapsed_time = forged
    assert type(elapsed) is float and elapsed > 0.1, elapsed


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_graph_trials_stream_waits_behind_the_launch_gate_until_opened():
    """The stream waits at the gate for the worker's write (work behind it does not run),
    and a gate left closed opens itself after GATE_MAX_S: it never holds the device."""
    from hf_eval.isolation.server import LaunchGate

    gate, tick = LaunchGate(), torch.zeros(1, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    # the kernel's first launch loads its module, which waits for the device to be idle:
    # behind a closed gate, until the watchdog opens it (as on the H100, driver 580)
    tick.add_(1)
    torch.cuda.synchronize()
    gate.close(stream)
    tick.add_(1)
    assert not torch.cuda.current_stream().query()  # behind the closed gate
    gate.open()
    torch.cuda.synchronize()
    assert tick.item() == 2
    gate.close(stream)  # and never opened: its timer does
    tick.add_(1)
    torch.cuda.synchronize()
    assert tick.item() == 3 and gate.word.item() == gate.value == 2


def test_cuptis_window_opens_at_the_earliest_lead_end_whoever_launched_it():
    """A trial's CUPTI window runs from the end of a lead sleep to the last marker: a
    candidate's own long sleep kernel, started before the harness's lead and ending after
    the calls, must not move the window's start past them (the span would read 0)."""
    from types import SimpleNamespace

    from hf_eval.isolation.server import LEAD, MARKER, _activity_summary

    def event(name, start, end):
        return SimpleNamespace(name=name, device_type=torch.autograd.DeviceType.CUDA,
                               time_range=SimpleNamespace(start=start, end=end,
                                                          elapsed_us=lambda: end - start))

    harness = [event(LEAD, 10, 11), event("work_kernel", 20, 120), event(MARKER, 130, 131)]
    honest = _activity_summary(SimpleNamespace(events=lambda: harness))
    assert honest == {"kernels": 1, "kernel_ms": 0.1, "span_ms": 0.1}
    disguised = harness + [event(LEAD, 5, 200)]  # the candidate's, on a side stream
    assert _activity_summary(SimpleNamespace(events=lambda: disguised))["span_ms"] >= 0.1


def test_the_workers_range_set_finds_exactly_the_overlaps_a_pass_over_all_would():
    """The worker checks each output against every earlier output and every lent slot
    through a set of ranges (a bisection each): it must answer as the pairwise rule does,
    empty spans, touching ends, other devices and overlapping ranges included."""
    import random

    from hf_eval.isolation.server import _overlaps, _Ranges

    draw = random.Random(7)
    for _ in range(300):
        def span():
            start = draw.randrange(0, 200)
            return start, start + draw.choice([0, 1, 3, 8, 40]), draw.choice(["cpu", "cuda:0"])

        held = [span() for _ in range(draw.randrange(0, 12))]
        ranges = _Ranges(held)
        for probe in [span() for _ in range(20)]:
            assert ranges.hits(probe) == any(_overlaps(probe, h) for h in held), (held, probe)
        grown, kept = _Ranges([]), []  # as the outputs of a trial: added when they hit none
        for probe in [span() for _ in range(30)]:
            assert grown.hits(probe) == any(_overlaps(probe, h) for h in kept), (kept, probe)
            if not grown.hits(probe):
                grown.add(probe)
                kept.append(probe)


def test_a_worker_closed_twice_is_ended_once(tmp_path, isolation, monkeypatch):
    """The audit may end a worker itself (a GPU it left busy) before the lane discards it:
    the second close must touch nothing, for the uid the first released may be another
    worker's by then."""
    from hf_eval.isolation import walls

    handle, _ = isolation.worker(_solution("honest", tmp_path), 10.0)
    handle.kill()
    assert handle.close() is True and handle.ended
    touched = []
    monkeypatch.setattr(walls, "reap", lambda uid, timeout: touched.append("reap"))
    monkeypatch.setattr(handle.lease, "release", lambda: touched.append("release"))
    assert handle.close() is True and touched == []


def test_the_gpu_lock_is_exclusive_between_threads_and_reentrant_within_one(
        tmp_path, monkeypatch):
    """Every step of a CUDA verdict holds the GPU's lock, and so does each truth computed
    for it: taken again inside (a fresh set's truth within a trial), it must not wait
    for itself; another thread (another lane or audit of the GPU) waits."""
    import threading
    from types import SimpleNamespace

    from hf_eval.isolation import workers

    monkeypatch.setenv(workers.LOCK_DIRECTORY_VARIABLE, str(tmp_path))
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index: SimpleNamespace(uuid="GPU-test"))
    device = torch.device("cuda", 0)
    order = []

    def other():
        with workers.gpu_lock(device):
            order.append("other")

    with workers.gpu_lock(device):
        with workers.gpu_lock(device):  # re-entrant: returns at once
            order.append("inner")
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()  # waits for this thread's lock
        order.append("outer")
    thread.join(5)
    assert order == ["inner", "outer", "other"]


@pytest.mark.parametrize("error", [torch.OutOfMemoryError, RuntimeError])
@pytest.mark.parametrize("kept", [True, False])
def test_a_truth_that_fails_beside_a_kept_candidate_worker_ends_it_and_tries_again(
        kept, error):
    """A candidate's worker kept between the workloads of a definition may hold the GPU's
    memory (an allocation, or the room a kernel's module needs to load: another type of
    error): the next workload's truth then fails. The worker is ended and the truth
    computed again, so the data is not blamed; with no worker kept, the failure stands."""
    from types import SimpleNamespace

    from hf_eval.judge.audit import Lane

    lane = Lane.__new__(Lane)
    lane.device = torch.device("cuda", 0)
    ended = []
    lane.isolation = SimpleNamespace(workers={"k": None} if kept else {}, dying=[],
                                     shutdown=lambda: ended.append(1))
    calls = []

    def compute(definition, inputs):
        calls.append(1)
        if not ended:
            raise error("CUDA error: out of memory")
        return (torch.zeros(1),)

    lane.compute_reference = compute
    if kept:
        assert lane._reference_or_room(None, [])[0].shape == (1,)
        assert ended == [1] and len(calls) == 2
    else:
        with pytest.raises(error):
            lane._reference_or_room(None, [])
        assert ended == [] and len(calls) == 1


def test_a_fresh_truth_that_fails_once_on_the_gpu_is_tried_once_more_and_blames_nobody():
    """A fresh set's truth that failed once on the GPU (the audit's own cached memory,
    say) is computed again with that memory given back; the candidate's worker, which
    holds the trial's inputs the harness put there, is not ended to find a culprit."""
    from hf_eval.judge.audit import Lane

    lane = Lane.__new__(Lane)
    lane.device = torch.device("cuda", 0)
    tries = []

    def compute(definition, inputs):
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("CUDA error: out of memory")
        return (torch.zeros(1),)

    lane.compute_reference = compute
    assert lane._truth_in_session(None, [])[0].shape == (1,) and len(tries) == 2


def test_the_boundary_tells_classes_apart_by_identity():
    """``type(x) in (A, B)`` compares classes with ``==`` where identity fails, and a
    metaclass answers ``==`` with its own code (True for any class, say): the boundary's
    code compares classes with ``is`` only."""
    from hf_eval.isolation.server import _of_class

    class AnyClass(type):
        def __eq__(cls, other):
            return True

        __hash__ = type.__hash__

    class Odd(metaclass=AnyClass):
        pass

    assert type(Odd()) in (int, str)  # what ``in`` would have let through
    assert not _of_class(Odd(), (int, str)) and _of_class(3, (int, str))
    asked = re.compile(r"\btype\([^()]*\)\s+(not\s+)?in\b")
    home = Path(protocol.__file__).parent
    found = [f"{path.name}:{n}" for path in sorted(home.glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if asked.search(line.split("#")[0])]
    assert not found
