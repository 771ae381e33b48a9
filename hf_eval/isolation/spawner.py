"""Starts candidate workers by forking a process that has already imported torch.

Why: a worker is a fresh interpreter that confines itself and then imports torch and the
harness, about three seconds of CPU on a 2-core machine, once per solution. The spawner
(``python -m hf_eval.isolation.spawner``) pays that once: it imports what a worker needs, never
runs candidate code, never initialises CUDA and never sees a reference, and on request
forks. The child has one thread (fork copies only the caller), so it can confine itself
exactly as :mod:`hf_eval.isolation.process` does (:func:`hf_eval.isolation.walls.confine`: Landlock,
namespaces, its own uid) before it serves its channel. Nothing the child could use is in
the spawner: its control socket is closed in the child before anything else happens.

The audit keeps one spawner per process (:func:`spawner`). A child is the spawner's
child, not the audit's: the audit watches it through a pidfd (passed back over the control
socket), kills it through that pidfd, and asks the spawner for its exit status.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback

from hf_eval.isolation.channel import readable

#: A request or reply: 4-byte length, then JSON; descriptors travel beside it.
_LENGTH = struct.Struct("<I")


def _send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    data = json.dumps(message).encode()
    socket.send_fds(sock, [_LENGTH.pack(len(data)) + data], list(fds))


def _recv(sock: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _, _ = socket.recv_fds(sock, _LENGTH.size, 4)
    if len(head) != _LENGTH.size:
        raise EOFError("the spawner's control socket closed")
    (length,) = _LENGTH.unpack(head)
    data = b""
    while len(data) < length:
        chunk = sock.recv(length - len(data))
        if not chunk:
            raise EOFError("the spawner's control socket closed mid-message")
        data += chunk
    return json.loads(data), fds


# ----------------------------------------------------------------------- the spawner
def _child(control: socket.socket, request: dict, channel_fd: int, log_fd: int,
           spawner: int) -> None:
    """In the forked child: detach, confine, serve. Never returns."""
    status = 1
    try:
        control.close()  # before anything else: the child must not reach the spawner
        from hf_eval.isolation.process import die_with_parent, serve

        die_with_parent(spawner)  # a spawner killed outright takes its workers with it
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        keep = sorted({0, 1, 2, channel_fd})
        for low, high in zip(keep, keep[1:] + [os.sysconf("SC_OPEN_MAX")]):
            os.closerange(low + 1, high)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        serve(channel_fd, request["walls"], started="fork")
        status = 0
    except BaseException:  # noqa: BLE001 - whatever happened, say it in the log and exit
        traceback.print_exc()
    finally:
        os._exit(status)


def _end_all(children: dict[int, list[str]]) -> None:
    """Kill every worker still alive, and every process of its group: the candidate's
    own process may have left its parent's death signal behind (a uid change clears it,
    and so can the candidate), so killing the outer process is not enough."""
    from hf_eval.isolation.limits import Group

    # The reaper pops children as they die: no reaping (and no change to ``children``)
    # while they are ended, and one worker's failure to end stops no other's.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    for pid, join_files in list(children.items()):
        if join_files:
            try:
                group = Group.of_join_files(join_files)
                if group.kill(timeout=2.0):
                    group.remove()
            except Exception:  # noqa: BLE001, S110 - the outer process is killed below
                pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _serve(control: socket.socket) -> None:
    """The spawner's loop: fork on ``spawn``, report exit statuses on ``status``."""
    from hf_eval.isolation.walls import harden_parent

    harden_parent()
    statuses: dict[int, int] = {}
    #: Every worker forked and not yet reaped, with its group's join files.
    children: dict[int, list[str]] = {}

    def reap(*_: object) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            statuses[pid] = os.waitstatus_to_exitcode(status)
            children.pop(pid, None)

    signal.signal(signal.SIGCHLD, reap)
    while True:
        try:
            request, fds = _recv(control)
        except (EOFError, OSError):  # the audit is gone: none of its workers outlives it
            _end_all(children)
            return
        if request["op"] == "spawn":
            channel_fd, log_fd = fds
            # No reaping between the fork and the pidfd: the pid cannot be reused.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
            spawner = os.getpid()
            pid = os.fork()
            if pid == 0:
                _child(control, request, channel_fd, log_fd, spawner)
            children[pid] = request["walls"].get("cgroup", [])
            pidfd = os.pidfd_open(pid)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            os.close(channel_fd)
            os.close(log_fd)
            _send(control, {"pid": pid}, [pidfd])
            os.close(pidfd)
        elif request["op"] == "status":
            deadline = time.monotonic() + request["timeout"]
            while request["pid"] not in statuses and time.monotonic() < deadline:
                reap()
                time.sleep(0.01)
            _send(control, {"code": statuses.pop(request["pid"], None)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hf_eval.isolation.spawner",
                                     description="forks the audit's confined workers (internal)")
    parser.add_argument("--fd", type=int, required=True, help="the control socket")
    args = parser.parse_args(argv)
    control = socket.socket(fileno=args.fd)
    # What every worker imports before it can serve: imported once, here.
    import torch  # noqa: F401

    import hf_eval.isolation.process  # noqa: F401
    import hf_eval.isolation.server  # noqa: F401

    gc.collect()
    gc.freeze()  # the imports stay out of every child's collections (and pages stay shared)
    _send(control, {"ready": True})
    _serve(control)
    return 0


# ----------------------------------------------------------------------- the audit's side
class ForkedProcess:
    """A worker forked by the spawner, with the part of ``subprocess.Popen``'s interface
    the executor uses (``pid``, ``poll``, ``wait``, ``kill``, ``returncode``)."""

    def __init__(self, spawner: Spawner, pid: int, pidfd: int) -> None:
        self.spawner = spawner
        self.pid = pid
        self.pidfd = pidfd
        self.returncode: int | None = None

    def _exited(self, timeout: float) -> bool:
        if self.pidfd < 0:
            return True
        return readable(self.pidfd, timeout)

    def poll(self) -> int | None:
        if self.returncode is None and self._exited(0):
            self._collect()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._exited(timeout):
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
            self._collect()
        return self.returncode

    def _collect(self) -> None:
        code = self.spawner.exit_code(self.pid)
        self.returncode = -signal.SIGKILL if code is None else code
        pidfd, self.pidfd = self.pidfd, -1  # (a kill from another thread may race this)
        if pidfd >= 0:
            os.close(pidfd)

    def kill(self) -> None:
        if self.pidfd >= 0:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:  # gone already, or its pidfd closed by a racing collect
                pass


class Spawner:
    """The audit's handle on its spawner process (one per audit process, :func:`spawner`)."""

    def __init__(self, env: dict[str, str], cwd: str) -> None:
        mine, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hf_eval.isolation.spawner", "--fd", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
            start_new_session=True)
        theirs.close()
        self.control = mine
        self.lock = threading.Lock()
        if not readable(mine, 120) or _recv(mine)[0] != {"ready": True}:
            self.process.kill()
            raise RuntimeError("the worker spawner did not start")

    def spawn(self, channel: socket.socket, log_fd: int, walls: dict, env: dict[str, str],
              cwd: str) -> ForkedProcess:
        with self.lock:
            _send(self.control, {"op": "spawn", "walls": walls, "env": env, "cwd": cwd},
                  [channel.fileno(), log_fd])
            reply, fds = _recv(self.control)
        return ForkedProcess(self, reply["pid"], fds[0])

    def exit_code(self, pid: int, timeout: float = 5.0) -> int | None:
        """The child's exit code (negative: killed by that signal), None if unknown."""
        try:
            with self.lock:
                _send(self.control, {"op": "status", "pid": pid, "timeout": timeout})
                return _recv(self.control)[0]["code"]
        except (OSError, EOFError):
            return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


_SPAWNERS: dict[tuple, Spawner] = {}
_LOCK = threading.Lock()


def spawner(env: dict[str, str], cwd: str) -> Spawner:
    """This process's spawner for workers of environment ``env`` (started on first use)."""
    key = tuple(sorted(env.items()))
    with _LOCK:
        found = _SPAWNERS.get(key)
        if found is None or not found.alive():
            found = _SPAWNERS[key] = Spawner(env, cwd)
        return found


@atexit.register
def close_all() -> None:
    """End every spawner of this process (at exit, or earlier when the caller is done)."""
    with _LOCK:
        for found in _SPAWNERS.values():
            found.close()
        _SPAWNERS.clear()


if __name__ == "__main__":
    raise SystemExit(main())
