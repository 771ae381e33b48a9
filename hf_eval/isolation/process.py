"""The candidate's process: ``python -m hf_eval.isolation.process --fd N --walls JSON``.

A worker is two processes. The *outer* one (the one the audit started, through the
spawner or as a fresh interpreter) joins the worker's control groups
(:mod:`hf_eval.isolation.limits`), makes a new PID and IPC namespace, and forks the
*inner* one, the first process of that namespace, which confines itself
(:mod:`hf_eval.isolation.walls`) while it still has one thread and only then serves
the candidate (:mod:`hf_eval.isolation.server`). The outer process holds nothing but
the wait for it, and exits as it did (the same code, or the same signal).

Why: when the first process of a PID namespace ends, the kernel kills every other
process in it, and an IPC namespace's objects (SysV shared memory, semaphores, message
queues) go with its last process. The inner process dies with the outer one
(``PR_SET_PDEATHSIG``), so when the audit kills the outer process, or the candidate's
own process ends however it does, nothing the candidate started survives: not a child
that changed session, not a chain that forks its successor, not a thread group whose
leader has exited, not a shared-memory segment.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
import tempfile
from pathlib import Path

from hf_eval.isolation.limits import Group
from hf_eval.isolation.walls import PR_SET_PDEATHSIG, SandboxError, Walls, confine

CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
_libc = ctypes.CDLL(None, use_errno=True)
#: The inner process's end of the pipe whose writer is the outer process (EOF: it died).
_OUTER_ALIVE: list[int] = []
#: (The outer process) The pid of the process whose end ends the worker.
_PARENT: list[int] = []


def die_with_parent(parent: int) -> None:
    """(The outer process) Be killed when ``parent`` (the spawner, or the audit that
    started this interpreter) ends, however it ends; exit now if it has ended already.
    The outer process keeps root's uid, so the signal stays set, and the candidate,
    another process of another uid, cannot clear it."""
    _PARENT[:] = [parent]
    if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
        os._exit(1)


def _end_with_parent(inner: int, walls: dict) -> None:
    """(The outer process, cgroup v1) A frozen v1 group's members act on no signal, a
    SIGKILL included, until it is thawed: a worker frozen while its stand-in is timed
    would outlive an audit (and spawner) killed then. So the outer process leaves the
    freezer group (it only waits; the candidate's processes stay in it) and, when its
    parent ends, kills the inner process and thaws the group, then exits as it did. On
    cgroup v2 a frozen task dies of SIGKILL, and the parent-death SIGKILL stays."""
    freezer = [f for f in walls.get("cgroup", []) if "freezer" in Path(f).parts]
    if not freezer or not _PARENT:
        return
    group = Group.of_join_files(walls["cgroup"])

    def end(*_: object) -> None:
        try:
            os.kill(inner, signal.SIGKILL)
        except ProcessLookupError:
            pass
        group.thaw()

    try:
        with open(Path(freezer[0]).parent.parent / "cgroup.procs", "w") as fh:
            fh.write(str(os.getpid()))  # back to the group it came from
    except OSError:  # frozen with the candidate, as before: the SIGKILL stays
        return
    signal.signal(signal.SIGTERM, end)
    if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0 or os.getppid() != _PARENT[0]:
        end()


def _exit_as(status: int) -> None:
    """End this (outer) process the way the inner one ended."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (1, 1))  # no dump, not even to a pipe
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))


def _fallback_limits(walls: dict) -> list[str]:
    """Per-process limits where the group caps nothing: the OOM killer's first pick
    always; processes per uid (the worker's uid is its own) without a process cap; the
    address space a CPU worker may add without a memory cap (CUDA reserves far more
    address space than it uses, so a GPU worker gets none)."""
    applied = []
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")
        applied.append("oom-first")
    except OSError:
        pass
    caps = walls.get("caps", []) if walls.get("cgroup") else []
    if "pids-cap" not in caps and walls.get("uid") is not None and walls.get("pids"):
        resource.setrlimit(resource.RLIMIT_NPROC, (walls["pids"], walls["pids"]))
        applied.append("rlimit-nproc")
    if "memory-cap" not in caps and walls.get("device") == "cpu" and walls.get("memory_bytes"):
        with open("/proc/self/status") as fh:
            size = next(int(line.split()[1]) * 1024 for line in fh
                        if line.startswith("VmSize:"))
        limit = size + walls["memory_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        applied.append("rlimit-as")
    return applied


def contain(walls: dict, keep: int) -> list[str]:
    """Join the worker's groups and, as root, fork into a new PID and IPC namespace.

    Returns, in the inner process only, the walls this added ("cgroup", "pidns",
    "ipcns"); the outer process waits for the inner one and exits as it did. ``keep``
    is the channel's descriptor: the outer process closes it, so the channel ends with
    the inner process."""
    applied = []
    for procs in walls.get("cgroup", []):
        with open(procs, "w") as fh:
            fh.write(str(os.getpid()))
    if walls.get("cgroup"):
        applied += ["cgroup", *walls.get("caps", [])]
    if os.geteuid() != 0:
        return applied + _fallback_limits(walls)
    if _libc.unshare(CLONE_NEWPID | CLONE_NEWIPC) != 0:
        raise SandboxError(f"unshare(PID, IPC) failed as root: "
                           f"{os.strerror(ctypes.get_errno())}")
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_w)
        if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            os._exit(1)
        if select.select([alive_r], [], [], 0)[0]:  # the outer process died already
            os._exit(1)
        _OUTER_ALIVE.append(alive_r)  # checked again once the uid drop cleared the signal
        return [*applied, "pidns", "ipcns", *_fallback_limits(walls)]
    os.close(alive_r)
    os.close(keep)
    _end_with_parent(pid, walls)
    while True:  # until it ends: a stop reported to a tracer is not an end
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            break
    _exit_as(status)
    raise AssertionError("unreachable")


def serve(fd: int, walls: dict, started: str) -> None:
    """Contain and confine this process, then serve the audit's channel on ``fd`` until it
    closes. ``started``: "exec" or "fork", reported with the walls."""
    # A worker forked from the spawner inherits what the spawner cached from its own
    # environment: the temporary directory must be the worker's private one (TMPDIR).
    tempfile.tempdir = None
    applied = contain(walls, fd)
    applied += confine(Walls(uid=walls["uid"], readable=tuple(walls["readable"]),
                             writable=tuple(walls["writable"]), network=walls["network"],
                             private_bytes=walls.get("private_bytes"),
                             shm_bytes=walls.get("shm_bytes", 1 << 30)))
    for alive_r in _OUTER_ALIVE:  # a uid change clears the parent-death signal: set again
        if _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            os._exit(1)
        if select.select([alive_r], [], [], 0)[0]:
            os._exit(1)
        os.close(alive_r)
    _OUTER_ALIVE.clear()
    # Imported only now: an exec'd worker must be confined before torch starts threads.
    from hf_eval.isolation.channel import Channel
    from hf_eval.isolation.server import Worker

    Worker(Channel(socket.socket(fileno=fd), restricted=False),
           [*applied, f"start:{started}"]).serve()


def main(argv: list[str] | None = None) -> int:
    parent = os.getppid()  # the audit, before anything can have changed it
    parser = argparse.ArgumentParser(prog="python -m hf_eval.isolation.process",
                                     description="the audit's candidate process (internal)")
    parser.add_argument("--fd", type=int, required=True, help="the channel's socket")
    parser.add_argument("--walls", required=True, help="JSON of the worker's walls")
    args = parser.parse_args(argv)
    die_with_parent(parent)
    serve(args.fd, json.loads(args.walls), started="exec")
    return 0


if __name__ == "__main__":
    sys.exit(main())
