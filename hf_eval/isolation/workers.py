"""The audit's side of candidate isolation: one contained, confined worker per solution.

A worker is started by the spawner (or as a fresh interpreter), in control groups of its
own (:mod:`hf_eval.isolation.limits`), in new PID and IPC namespaces
(:mod:`hf_eval.isolation.process`), behind the walls of :mod:`hf_eval.isolation.walls`,
under a uid of its own (when the audit runs as root). When it ends, its groups are
frozen and emptied, its uid is reaped, and its private directory (a tmpfs in its own
mount namespace) is gone.

Each request has one deadline for the whole exchange (TIMEOUT when missed) and a nonce
the reply must carry; the reply is checked by :mod:`hf_eval.isolation.protocol`, and
anything the protocol does not allow ends the worker as RUNTIME_ERROR (tampering). A
worker's death is RUNTIME_ERROR with the signal, or "out of memory" when its group's
memory limit killed it. The statuses here are the audit's: a worker never names one.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import secrets
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import torch

from hf_eval import WORKER_VARIABLE
from hf_eval.data import memory
from hf_eval.data.schema import Solution
from hf_eval.data.sources import solution_hash
from hf_eval.data.status import Status
from hf_eval.isolation import protocol, spawner
from hf_eval.isolation import walls as sandbox
from hf_eval.isolation.channel import Channel, ChannelClosed, ChannelTimeout
from hf_eval.isolation.limits import Group, Limits

LOAD_TIMEOUT_S = 120.0
#: Live candidate workers a lane keeps: one, so no candidate runs while another is timed.
MAX_WORKERS = 1
#: Worker uids 61000..61899 (sandbox.WORKER_UID_BASE + slot); 61900.. are the tests'.
UID_SLOTS = 900
START_TIMEOUT_S = 60.0
#: How long the audit waits for an ended worker's processes to vanish before it starts the
#: next one (killed, they may still be dying: a teardown of gigabytes of page tables).
END_TIMEOUT_S = 120.0
#: Seconds an isolation that closes waits, for all of them together, for workers still
#: dying after END_TIMEOUT_S.
DYING_LAST_WAIT_S = 5.0
#: What a worker may write to stdout and stderr together (the rest is refused).
LOG_BYTES = 1 << 20
#: Environment variables a worker inherits (everything else is dropped).
INHERITED = ("PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME",
             "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
             "MKL_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
#: How workers start: "fork" from the spawner (torch already imported: fast), or "exec"
#: (a fresh interpreter each). ``HF_EVAL_WORKER_START=exec`` forces the latter; the
#: report's ``isolation`` field says which one ran (``start:fork`` / ``start:exec``).
START_METHOD = os.environ.get("HF_EVAL_WORKER_START", "fork")


def inherited_environment(environ: dict[str, str]) -> dict[str, str]:
    """The INHERITED entries of ``environ``, refusing a relative PYTHONPATH entry: the
    spawner starts in / and each worker in its private directory, so a relative entry
    would name another folder there and the worker would fail to import hf_eval with no
    word of why. An empty entry (``$PYTHONPATH:/x`` with the variable unset) stays: it is
    the worker's own directory, as Python reads it, and names nothing of the parent's."""
    relative = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep)
                if p and not os.path.isabs(p)]
    if relative:
        raise sandbox.SandboxError(
            f"PYTHONPATH entry {relative[0]!r} is relative: workers start in / and in their "
            "private directory, where it names another folder; give absolute paths")
    return {k: environ[k] for k in INHERITED if k in environ}


class WorkerFailure(Exception):
    """The worker could not answer: timeout, crash or a reply the protocol refuses."""

    def __init__(self, status: Status, reason: str) -> None:
        super().__init__(reason)
        self.status = status


#: Where the uid locks live: one folder for the whole machine, whatever ``TMPDIR`` an
#: audit runs with (two audits with locks in two folders could take the same uid, and
#: reaping one's worker would kill the other's).
UID_LOCK_DIRECTORY = Path("/tmp")


#: Uids whose leftover processes survived a reap in this process: passed over at once
#: afterwards, so each costs its wait once, not at every worker start.
_UNREAPED: set[int] = set()


class StandInFailed(sandbox.SandboxError):
    """The lane's stand-in worker could not start (or load): the harness's failure,
    unless a candidate's worker alive meanwhile was the cause (the audit tries again
    without it: :meth:`hf_eval.judge.audit.Lane.judge`)."""


class UidLease:
    """An exclusive claim on one worker uid among every audit on this machine (a lock file
    per uid in :data:`UID_LOCK_DIRECTORY`), so that reaping one worker's uid can never kill
    another audit's worker. None when not root: the worker keeps the audit's uid
    (sandbox.py says what holds then).
    """

    def __init__(self) -> None:
        self.uid: int | None = None
        self._fh = None
        if os.geteuid() != 0:
            return
        unreaped = ""
        for slot in range(UID_SLOTS):
            uid = sandbox.worker_uid(slot)
            if uid in _UNREAPED:  # its reap already waited once in this process
                continue
            fh = open(UID_LOCK_DIRECTORY / f"hf_eval-uid-{uid}.lock", "w")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            try:  # leftovers of an audit that died: nobody holds the lock
                sandbox.reap(uid)
            except sandbox.SandboxError as exc:  # still dying: another uid, not this audit's end
                fcntl.flock(fh, fcntl.LOCK_UN)
                fh.close()
                _UNREAPED.add(uid)
                unreaped = f" ({exc})"
                continue
            self.uid, self._fh = uid, fh
            return
        raise sandbox.SandboxError(f"all {UID_SLOTS} worker uids are in use{unreaped}")

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


#: Workers of this process still starting or loading their candidate (not yet in any
#: :class:`Isolation`'s ``workers``), so that :meth:`Isolation.kill_all` reaches them too.
STARTING: set[WorkerHandle] = set()


class WorkerHandle:
    """A contained, confined worker process and its private channel."""

    def __init__(self, solution: Solution | None, device: torch.device,
                 limits: Limits | None = None) -> None:
        """``solution`` None: a worker for no candidate yet (the stand-in, which never
        loads candidate code, or a spare: :meth:`Isolation.spare`)."""
        self.solution_key = solution_hash(solution) if solution is not None else "stand-in"
        self.limits = limits or Limits.from_environment()
        self.lease = UidLease()
        self.uid = self.lease.uid
        self.private: Path | None = None
        self.group: Group | None = None
        self.process = None
        try:
            self.private = sandbox.private_dir(self.uid)
            self.group = Group.create(self.limits)
            mine, theirs = socket.socketpair()
            walls = {"uid": self.uid, "readable": list(sandbox.default_readable()),
                     "writable": [str(self.private)], "network": False,
                     "cgroup": self.group.join_files() if self.group else [],
                     "caps": self.group.caps if self.group else [],
                     "memory_bytes": self.limits.memory_bytes, "pids": self.limits.pids,
                     "device": device.type,
                     "private_bytes": self.limits.private_bytes,
                     "shm_bytes": self.limits.shm_bytes}
            # (the marker keeps OpenMP's own wait policy in processes that run candidates)
            base = {**inherited_environment(os.environ), WORKER_VARIABLE: "1"}
            # The worker's uid has no passwd entry: USER and LOGNAME answer getpass.getuser().
            env = {**base, **sandbox.private_env(self.private), "HF_EVAL_CACHE": str(self.private),
                   "PYTHONDONTWRITEBYTECODE": "1", "USER": "hf-eval-worker",
                   "LOGNAME": "hf-eval-worker"}
            # stdout and stderr: a memfd of fixed size (no write can grow it: never the disk)
            self.log = memory.log_file(LOG_BYTES)
            if START_METHOD == "fork":
                try:
                    self.process = spawner.spawner(base, "/").spawn(
                        theirs, self.log, walls, env, str(self.private))
                except (OSError, EOFError, RuntimeError) as exc:  # reported: start:exec
                    warnings.warn(f"worker spawner unavailable ({exc}); this worker starts as "
                                  "a fresh interpreter", RuntimeWarning, stacklevel=2)
            if self.process is None:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "hf_eval.isolation.process", "--fd",
                     str(theirs.fileno()), "--walls", json.dumps(walls)],
                    pass_fds=[theirs.fileno()], cwd=self.private, env=env,
                    stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                    start_new_session=True)
            theirs.close()
            self.channel = Channel(mine, restricted=True)
            self.closed = False
            #: Whether :meth:`close` has ended all of it (a second close then does nothing:
            #: the uid it released may be another worker's by then).
            self.ended = False
            STARTING.add(self)
            # Up and behind its walls. The walls it names now, before any candidate code has
            # run in it, are the ones recorded (a candidate could rewrite a later answer).
            self.walls = self.request({"op": "null"}, START_TIMEOUT_S)[0].walls
        except BaseException:  # an interrupt, or a worker that never came up: no trace left
            self._abandon()
            raise
        finally:
            STARTING.discard(self)

    def _abandon(self) -> None:
        """Undo a start cut short: kill what started, remove the group and the private
        directory, give the uid back (never raises)."""
        try:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
                self.process.wait(2)
            if self.group is not None and self.group.kill(timeout=2.0):
                self.group.remove()
            if self.private is not None:
                sandbox.remove_private_dir(self.private)
            self.lease.release()
            if getattr(self, "channel", None) is not None:
                self.channel.close()
            if getattr(self, "log", None) is not None:
                os.close(self.log)
        except Exception:  # noqa: BLE001 - the start's own error is the one reported
            pass

    def request(self, message: dict, timeout: float) -> tuple[protocol.Reply, float]:
        """Send one request and take its reply, both within ``timeout`` seconds; the
        checked reply and the wall milliseconds this process measured. A reply with an
        ``error`` is the candidate's failure (the caller names the status)."""
        nonce = secrets.token_hex(16)
        t0 = time.perf_counter()
        deadline = time.monotonic() + timeout
        try:
            self.channel.send({**message, "nonce": nonce}, deadline)
            raw = self.channel.recv(deadline)
        except ChannelTimeout:
            self.kill()
            raise WorkerFailure(Status.TIMEOUT, f"no answer within {timeout:.0f} s") from None
        except (ChannelClosed, OSError) as exc:
            text = str(exc)
            if any(word in text for word in ("refused class", "malformed", "unreadable")):
                self.kill()
                raise WorkerFailure(Status.RUNTIME_ERROR,
                                    f"result channel tampering: {text}") from None
            reason = self._death("worker process died")  # how it ended, before the kill
            self.kill()
            raise WorkerFailure(Status.RUNTIME_ERROR, reason) from None
        wall_ms = (time.perf_counter() - t0) * 1e3
        try:
            reply = protocol.parse(raw, nonce)
        except protocol.ProtocolError as exc:
            self.kill()
            raise WorkerFailure(Status.RUNTIME_ERROR,
                                f"result channel tampering: {exc}") from None
        if self.channel.poll(0):
            self.kill()
            raise WorkerFailure(Status.RUNTIME_ERROR, "result channel tampering: unrequested "
                                "messages on the result pipe")
        return reply, wall_ms

    def _death(self, what: str) -> str:
        try:
            code = self.process.wait(2)
        except subprocess.TimeoutExpired:
            code = None
        if self.group is not None and self.group.out_of_memory():
            return (f"{what}: out of memory (the worker's limit is "
                    f"{self.limits.memory_bytes / 2**30:.1f} GiB)")
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            hint = (" (a bad memory access; a write to an input faults too: inputs are "
                    "mapped read-only; so does abort(): the worker is the first process of "
                    "its PID namespace, which ignores the SIGABRT it sends itself)"
                    if name in ("SIGSEGV", "SIGBUS") else "")
            return f"{what}: killed by {name}{hint}"
        return f"{what} (exit code {code}){self.log_tail()}"

    def log_tail(self, limit: int = 400) -> str:
        """The end of what the worker wrote to stdout and stderr (for load failures),
        quoted as the candidate's own words: the candidate writes there too, and a line
        of its that reads like the harness's ("DATA_ERROR: ...") must not read as the
        audit's finding."""
        try:
            text = os.pread(self.log, LOG_BYTES, 0).rstrip(b"\0").decode(errors="replace")
        except OSError:
            return ""
        text = text.strip()
        return (f"; the worker's own output (candidate text, not the audit's): "
                f"{json.dumps('...' + text[-limit:])}" if text else "")

    def alive(self) -> bool:
        return self.process.poll() is None

    def lent_for_earlier_cases(self) -> int:
        """Bytes of the memory the audit lent this worker for cases before the current one
        (every memfd it was sent, :attr:`Channel.lent`). The audit wrote those pages, so
        they are charged to its group, not the worker's, and a worker can keep them alive
        (mapped, by a descriptor, in a pipe) past the case, out of sight of any scan: what
        it was lent bounds what it can hold."""
        return sum(size for case, size in self.channel.lent.values()
                   if case < self.channel.case)

    def freeze(self, timeout: float = 5.0) -> bool | None:
        """Stop every process of this worker (while the stand-in is timed): True once all
        are frozen, False if some did not stop within ``timeout`` seconds, None where
        there is no group."""
        return None if self.group is None else self.group.freeze(timeout)

    def thaw(self) -> None:
        if self.group is not None:
            self.group.thaw()

    def kill(self) -> None:
        """SIGKILL the worker and every member of its group (without waiting long)."""
        if self.alive():
            self.process.kill()
        if self.group is not None:
            self.group.kill(timeout=1.0)
        try:
            self.process.wait(2)
        except subprocess.TimeoutExpired:
            pass

    def close(self, timeout: float = END_TIMEOUT_S) -> bool:
        """End the worker, every process of its group and uid, and its directory; True
        once all of it is gone. A process killed but still dying after ``timeout``
        seconds (the kernel tearing down a huge address space, say) is left to finish:
        the worker's uid and group stay held, so no later worker shares them, and the
        caller is told (False). Never raises: a candidate never stops the audit."""
        if self.ended:
            return True
        if self.alive():
            try:
                self.channel.send({"op": "exit", "nonce": ""}, time.monotonic() + 1.0)
                self.process.wait(2)
            except (ChannelClosed, OSError, subprocess.TimeoutExpired):
                pass
        if not self.closed:
            self.kill()
            self.channel.close()
            os.close(self.log)
            self.closed = True
        deadline = time.monotonic() + timeout
        ended = self.group is None or self.group.kill(timeout=timeout)
        if ended and self.uid is not None:
            try:  # its /dev/shm was a private tmpfs: nothing left there
                sandbox.reap(self.uid, timeout=max(1.0, deadline - time.monotonic()))
            except sandbox.SandboxError:
                ended = False
        if not ended:
            return False
        if self.group is not None:
            self.group.remove()
        sandbox.remove_private_dir(self.private)
        self.lease.release()
        self.ended = True
        return True


#: Names the folder of the per-GPU lock files (default: /tmp). Every audit
#: that shares a GPU must use the same folder; ``scripts/audit_solutions.py
#: --lock-directory`` sets it.
LOCK_DIRECTORY_VARIABLE = "HF_EVAL_LOCK_DIRECTORY"


def gpu_lock_path(gpu_uuid: str) -> Path:
    """The lock file of one physical GPU: ``hf_eval-gpu-<uuid>.lock`` in
    ``$HF_EVAL_LOCK_DIRECTORY`` (created when absent), else in ``/tmp`` (whatever
    ``TMPDIR`` says, so that every audit of the GPU finds it). A lock directory a worker
    could read is refused: a worker could ``flock`` the file (a read-only descriptor
    suffices) and hold every audit of the GPU."""
    folder = os.environ.get(LOCK_DIRECTORY_VARIABLE)
    if not folder:  # one folder whatever TMPDIR an audit runs with, as the uid locks
        return UID_LOCK_DIRECTORY / f"hf_eval-gpu-{gpu_uuid}.lock"
    resolved = Path(folder).resolve()  # what is checked is what is opened, whatever the
    _refuse_readable(resolved, folder)  # working directory or a link becomes later
    resolved.mkdir(parents=True, exist_ok=True)
    return resolved / f"hf_eval-gpu-{gpu_uuid}.lock"


@functools.cache
def _refuse_readable(resolved: Path, given: str) -> None:
    """Raise where the lock directory ``resolved`` (set as ``given``) lies in a tree the
    workers may read (:func:`hf_eval.isolation.walls.default_readable`)."""
    for tree in sandbox.default_readable():
        if resolved.is_relative_to(Path(tree).resolve()):
            raise sandbox.SandboxError(
                f"{LOCK_DIRECTORY_VARIABLE}={given}: the GPU lock directory lies in {tree}, "
                "which every worker may read (a worker could hold the lock); choose one "
                "outside it (the default, /tmp, is)")


#: Seconds between two looks at the stop event while another audit holds a GPU lock.
LOCK_POLL_S = 0.05
#: The GPU locks this thread holds (their paths): taken again inside, a lock is already
#: held (a second ``flock`` of the same file from one thread would wait for itself).
_HELD = threading.local()


class LockWaitStopped(RuntimeError):
    """The audit was stopped (Ctrl-C) while it waited for a GPU's lock."""


@contextmanager
def gpu_lock(device: torch.device, stop: threading.Event | None = None):
    """An exclusive lock per GPU, so two audits never use one GPU at once while either
    judges a candidate or computes a truth on it (re-entrant within a thread). The wait
    for another audit's lock ends with :class:`LockWaitStopped` once ``stop`` is set."""
    if device.type != "cuda":
        yield
        return
    index = device.index if device.index is not None else torch.cuda.current_device()
    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", index))
    path = gpu_lock_path(uuid)
    held = vars(_HELD).setdefault("paths", set())
    if path in held:
        yield
        return
    fd = _locked(path, stop)
    try:
        held.add(path)
        try:
            yield
        finally:
            held.discard(path)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _wait_for_lock(fd: int, path: Path, stop: threading.Event | None) -> None:
    """``flock(fd, LOCK_EX)``, waited for in the kernel's queue (a loop of tries would lose
    to a holder that takes the lock again at once, between two cases); the wait is
    abandoned once ``stop`` is set, and a lock granted after that is let go at once."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    granted, abandoned, decided = threading.Event(), threading.Event(), threading.Lock()

    def wait() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with decided:
            if not abandoned.is_set():
                granted.set()
                return
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    threading.Thread(target=wait, name="gpu-lock-wait", daemon=True).start()
    while not granted.wait(LOCK_POLL_S):
        if stop is not None and stop.is_set():
            with decided:
                if not granted.is_set():
                    abandoned.set()  # the waiting thread closes the descriptor
                    raise LockWaitStopped(f"stopped while waiting for {path} (another "
                                          "audit of the GPU holds it)")


def _locked(path: Path, stop: threading.Event | None = None) -> int:
    """A descriptor of the lock file ``path``, exclusively locked: the file the path
    names once the lock is held (one removed meanwhile, by a cleaner of the temporary
    folder say, would be a lock no other audit sees), taken again until it is. While
    another process holds it, ``stop`` is looked at every :data:`LOCK_POLL_S`."""
    while True:
        fd = open_lock_file(path)
        _wait_for_lock(fd, path, stop)
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        held = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)


def open_lock_file(path: Path) -> int:
    """A descriptor of the lock file ``path``, which only this user may open: a regular
    file of one name, created with mode 0600, an older one of this user's narrowed to it.
    Whatever tree the file comes to lie in (a bind mount of its folder, say), a worker of
    another uid cannot open it to hold the lock (``flock`` needs only a read-only
    descriptor). A link in its place, another kind of file, a file with other names or
    of another owner is refused, naming it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                     | os.O_NONBLOCK, 0o600)  # (a FIFO in its place would block the open)
    except OSError as exc:  # a link in its place, a folder, another user's file, ...
        raise sandbox.SandboxError(f"{path}: the GPU lock file cannot be opened "
                                   f"({exc.strerror})") from None
    info = os.fstat(fd)
    problem = None
    if info.st_uid != os.geteuid():
        problem = (f"is owned by uid {info.st_uid}, not by this audit's (uid "
                   f"{os.geteuid()})")
    elif not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_nlink != 1:
        problem = f"has {info.st_nlink} names (a hard link to another file)"
    if problem is not None:
        os.close(fd)
        raise sandbox.SandboxError(f"{path}: the GPU lock file {problem}: remove it, or "
                                   f"set {LOCK_DIRECTORY_VARIABLE} to a folder of this "
                                   "user's")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.fchmod(fd, 0o600)
    return fd


class Isolation:
    """At most one live worker per solution; a worker is replaced after any fatal failure.

    A solution's worker stays up while the audit moves between workloads of one
    definition (as long as it was lent at most ``Limits.kept_lent_bytes`` for the
    earlier ones), and is ended as soon as another solution needs one: at most one
    candidate's worker lives at a time, so none runs while another is timed. A new
    solution always gets a worker that never served anything before (forked by the
    spawner: a fraction of a second). Every worker holds a uid of its own
    (:class:`UidLease`), so reaping one never touches another.
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.workers: dict[str, tuple[WorkerHandle, protocol.Reply]] = {}
        #: Solutions (by hash) whose worker was ended by the candidate's own failure
        #: (:meth:`discard` with ``failed``): their next load counts against its case.
        self.failed: set[str] = set()
        #: Seconds the last :meth:`worker` call spent loading a solution again after its
        #: own failure (0 for any other load: a first one, or one the audit caused).
        self.reload_s = 0.0
        #: Workers being ended (:meth:`_end`), which :meth:`kill_all` reaches too.
        self.ending: set[WorkerHandle] = set()
        #: Solutions whose worker was replaced for the memory lent to it (noted once).
        self.renewed: set[str] = set()
        self._stand_in: WorkerHandle | None = None
        #: A worker started before its candidate is known (:meth:`spare`), or None.
        self._spare: WorkerHandle | None = None
        #: Workers killed but still dying when they were ended (their uid and group held).
        self.dying: list[WorkerHandle] = []
        #: What a reader of the report should know (a worker slow to die).
        self.notes: list[str] = []

    def _end(self, handle: WorkerHandle, what: str) -> None:
        started = time.monotonic()
        self.ending.add(handle)
        try:
            ended = handle.close()
        finally:
            self.ending.discard(handle)
        if not ended:
            self.dying.append(handle)
            self.notes.append(f"the worker of {what} was still dying "
                              f"{time.monotonic() - started:.0f} s after it was killed")

    def stand_in(self) -> WorkerHandle:
        """This lane's harness-only worker (same walls, never a candidate), whose cost
        for the same requests is what the audit subtracts from a candidate's."""
        if self._stand_in is None or not self._stand_in.alive():
            if self._stand_in is not None:
                self._end(self._stand_in, "the stand-in")
                self._stand_in = None
            try:
                self._stand_in = WorkerHandle(None, self.device)
                reply, _ = self._stand_in.request({"op": "load", "stand_in": True,
                                                   "device": str(self.device)},
                                                  LOAD_TIMEOUT_S)
                error = reply.error
            except (sandbox.SandboxError, WorkerFailure, OSError) as exc:
                error = f"{type(exc).__name__}: {exc}"
            if error is not None:
                if self._stand_in is not None:
                    self._end(self._stand_in, "the stand-in")
                    self._stand_in = None
                raise StandInFailed(f"the stand-in worker failed: {error}")
        return self._stand_in

    def spare(self) -> None:
        """Start the next candidate's worker now, while no candidate is judged: forked,
        behind its walls, its device taken and (on CUDA) CUPTI started once, so that
        ``load`` only imports the candidate. No candidate code has run in it; the next
        new solution gets it (:meth:`worker`), and it is never given to a second one.
        ``hf-eval serve`` starts one between requests: the seconds a new worker costs
        then fall while the client writes its next candidate, not inside its request."""
        if self._spare is not None and self._spare.alive():
            return
        if self._spare is not None:
            self._end(self._spare, "the spare worker")
            self._spare = None
        handle = WorkerHandle(None, self.device)
        try:
            reply, _ = handle.request({"op": "warm", "device": str(self.device)},
                                      LOAD_TIMEOUT_S)
        except BaseException:
            self._end(handle, "the spare worker")
            raise
        if reply.error is not None:
            self._end(handle, "the spare worker")
            raise sandbox.SandboxError(f"the spare worker failed: {reply.error}")
        self._spare = handle

    @property
    def spare_ready(self) -> bool:
        """Whether a spare worker waits for the next candidate."""
        return self._spare is not None and self._spare.alive()

    def _new_handle(self, solution: Solution) -> WorkerHandle:
        """The spare worker (taken: never offered again), else a new one."""
        handle, self._spare = self._spare, None
        if handle is not None and handle.alive():
            handle.solution_key = solution_hash(solution)
            return handle
        if handle is not None:
            self._end(handle, "the spare worker")
        return WorkerHandle(solution, self.device)

    def worker(self, solution: Solution, timeout: float, reload_timeout: float | None = None
               ) -> tuple[WorkerHandle, protocol.Reply]:
        """The solution's live worker, or a new one (every other candidate's worker is
        ended first); the load reply says whether the candidate loaded. A load after the
        solution's own failure (:attr:`failed`) has at most ``reload_timeout`` seconds
        (the case's budget), and its seconds are :attr:`reload_s`."""
        key = solution_hash(solution)
        self.end_others(key)
        found = self.workers.get(key)
        if found is not None and found[0].alive() and found[1].error is None:
            handle = found[0]
            handle.channel.case += 1  # a new case: what was lent before is earlier now
            lent = handle.lent_for_earlier_cases()
            if lent > handle.limits.kept_lent_bytes:
                if key not in self.renewed:
                    self.renewed.add(key)
                    self.notes.append(
                        f"the worker of {solution.name} is replaced before a workload once "
                        f"the memory lent to it for earlier ones passes "
                        f"{handle.limits.kept_lent_bytes / 2**20:.0f} MiB (here "
                        f"{lent / 2**20:.0f} MiB; HF_EVAL_WORKER_KEPT_LENT)")
                self.discard(key)
                found = None
        self.reload_s = 0.0
        if found is None or not found[0].alive() or found[1].error is not None:
            if found is not None:
                self.discard(key, failed=True)  # (it died, or its load failed)
            again = key in self.failed
            self.failed.discard(key)
            handle = self._new_handle(solution)
            # Importing the solution (which may JIT-compile kernels) gets at least
            # LOAD_TIMEOUT_S, whatever the per-call timeout; again after its own failure,
            # no more than its case may take.
            deadline = max(timeout, LOAD_TIMEOUT_S)
            if again and reload_timeout is not None:
                deadline = min(deadline, reload_timeout)
            STARTING.add(handle)  # until it is one of :attr:`workers`
            t0 = time.perf_counter()
            try:
                reply, _ = handle.request({"op": "load", "solution": solution.model_dump_json(),
                                           "device": str(self.device)}, deadline)
            except BaseException:
                self._end(handle, solution.name)
                raise
            finally:
                STARTING.discard(handle)
                if again:
                    self.reload_s = time.perf_counter() - t0
            self.workers[key] = (handle, replace(reply, walls=handle.walls))
        return self.workers[key]

    def end_others(self, solution_key: str) -> None:
        """End every worker but that of the solution ``solution_key`` names (one
        candidate's processes at a time). The audit calls it before a case's clock starts,
        so that no record carries the end of another solution's worker."""
        for other in [k for k in self.workers if k != solution_key]:
            self.discard(other)

    def discard(self, solution_key: str, failed: bool = False) -> None:
        """Drop a solution's worker; ``failed``: for the candidate's own failure (a
        timeout, crash, failed import or fatal error), so that its next load counts
        against the case that needs it."""
        if failed:
            self.failed.add(solution_key)
        found = self.workers.pop(solution_key, None)
        if found is not None:
            self._end(found[0], f"solution {solution_key[:12]}")

    def shutdown(self) -> None:
        """End every candidate worker (the stand-in stays for the next one) and forget
        whose failure ended one: what follows (another definition, another request to
        ``hf-eval serve``, which may post the same sources) starts anew."""
        for key in list(self.workers):
            self.discard(key)
        self.failed.clear()

    def kill_all(self) -> None:
        """SIGKILL every worker now, the stand-in too (from another thread, on Ctrl-C):
        a request in flight fails, and :meth:`close` then removes what is left."""
        for handle in ([found[0] for found in list(self.workers.values())]
                       + [self._stand_in, self._spare, *list(STARTING), *list(self.ending)]):
            if handle is not None:
                handle.kill()

    def close(self) -> None:
        self.shutdown()
        if self._spare is not None:
            self._end(self._spare, "the spare worker")
            self._spare = None
        if self._stand_in is not None:
            self._end(self._stand_in, "the stand-in")
            self._stand_in = None
        # A last wait for those still dying, DYING_LAST_WAIT_S for all of them together
        # (each was waited for END_TIMEOUT_S when it was ended); the rest are left to die.
        deadline = time.monotonic() + DYING_LAST_WAIT_S
        self.dying = [h for h in self.dying
                      if not h.close(max(0.0, deadline - time.monotonic()))]
