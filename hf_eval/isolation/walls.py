"""OS-enforced confinement of the audit's worker process (the one that runs candidate code).

The verdict and the timing of an audit are a reward signal, so a candidate that could read
the reference outputs, the dataset or the harness's cache, write outside its own directory,
inspect the parent's memory, reach the network or leave processes behind would be paid for
cheating. Python-level checks cannot stop code running in the same process; only the
kernel can. ``confine`` therefore asks the kernel, irreversibly and before any candidate
code runs, for these walls (each one reported by name so the audit can record them):

``netns``
    (root, ``network=False``) a fresh network namespace: no interface but a ``lo`` that
    is down, so no socket can reach anything, including services on the host's loopback.
``mountns``
    (root) a private mount namespace, used for two things only: a fresh private tmpfs on
    ``/dev/shm`` (so workers cannot leave files there for each other) and making trees
    the worker must read reachable by the worker uid when an ancestor is not (the
    interpreter under ``/root/.pyenv`` behind a ``0700`` ``/root``; see ``_make_reachable``).
``rlimit_core``
    no core dumps, to a file or to a pipe (a crash must not write the process's memory
    anywhere): the limit is 1 byte, the value that also stops a dump piped to a helper
    (0 does not), hard, so no child raises it; it holds across ``execve``, which would
    make a process dumpable again.
``rlimit_nofile``
    at most :data:`WORKER_FILES` open descriptors a process, hard: an epoll instance
    costs 256 bytes of kernel memory no cgroup charges, so the worker's processes times
    this bound is what it can hold outside its group (128 MiB at the default 512
    processes and threads: a thread may own a table too).
``no_new_privs``
    execve can never gain privileges again (setuid binaries, file capabilities); Landlock
    requires it of an unprivileged process.
``landlock-abiN``
    a Landlock domain: the file system is read-only and only inside ``Walls.readable``
    (``/sys`` less :data:`SYS_HIDDEN`),
    read-write only inside ``Walls.writable``; everything else (the dataset, the cache,
    other workers' directories, ``/tmp``, ``/root``) cannot be opened at all. Landlock
    also forbids ptrace, ``/proc/<pid>/mem`` and ``process_vm_readv`` of any process
    outside the domain (the parent included), and forbids mounting.
``landlock-net``
    (ABI >= 4, ``network=False``) TCP bind and connect denied, a second network wall that
    also holds when not root (no netns then).
``landlock-scope``
    (ABI >= 6) no signals to processes outside the domain (the candidate cannot kill or
    stop the parent) and no connecting to abstract unix sockets outside it.
``pressure-hidden``
    (root) an empty read-only tmpfs over ``/proc/pressure``: its files are writable by
    every user, and each open one may hang a trigger on the host's root pressure group,
    which every host reader of pressure then walks and whose teardown waits for an RCU
    grace period a trigger (hundreds of thousands of them held a killed worker for
    minutes).
``capbset``
    (root) every capability removed from the bounding set and the ambient set.
``uid:N``
    (root, ``Walls.uid`` set) groups cleared, then gid and uid set to N (real, effective
    and saved): the worker loses every capability and DAC keeps it out of root's files.
``caps``
    (root, ``Walls.uid`` None) effective/permitted/inheritable capabilities cleared, the
    best that is possible while keeping uid 0. Note that uid 0 still owns most files, so a
    root worker without ``uid`` is weaker (it can read root-owned files that Landlock
    allows, e.g. ``/etc/shadow``): pass a uid whenever running as root.
``nondumpable``
    ``PR_SET_DUMPABLE 0`` (set after the uid change, which resets it): no same-uid
    process (another candidate process of the same lane) can ptrace the worker.

Not root (a developer's laptop): no netns, mountns, capbset or uid; Landlock,
no_new_privs, rlimit_core, rlimit_nofile, landlock-net and nondumpable still apply.

What stays reachable, by design (see ``_apply_landlock``): reading ``Walls.readable``
(system trees, the interpreter, the hf_eval package); opening the device nodes in
``DEVICE_NODES`` (``/dev/null`` and friends, ``/dev/nvidia*``) for read, write and ioctl;
``/dev/shm`` (private per worker when root, the host's shared one otherwise); file writes
under ``/proc/<pid>`` of the worker itself (CUDA's initialisation needs one: error 304
otherwise), or under all of ``/proc`` after a uid drop, where DAC limits them to the
worker's own processes (so a child process can initialise CUDA too).

Limits: file descriptors inherited from the parent are not re-checked (give the worker
only its pipe and ``/dev/null``, never a tty: TIOCSTI); UDP and unix-path sockets are only
stopped by the netns (root); there is no cgroup, so memory, CPU and process count are not
capped here (reap() kills by uid; a fork bomb can only delay it); nvidia device nodes
created after ``confine`` (nvidia-modprobe) are not covered, so initialise the driver in
the parent first.

``confine`` must run while the process has exactly one thread, i.e. before ``torch`` (which
starts threads at import) is imported: Landlock and the namespaces apply to the calling
thread only, and any other thread would be an unconfined thread sharing the candidate's
address space.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import hf_eval

__all__ = [
    "SandboxError",
    "Walls",
    "confine",
    "default_readable",
    "harden_parent",
    "landlock_abi",
    "private_dir",
    "private_env",
    "reap",
    "remove_private_dir",
    "worker_uid",
]

# Per-lane uids: 61000 + lane. Dedicated and otherwise unused, so that reap() of one lane
# can kill by uid without touching anything else (another lane, the user, a daemon).
WORKER_UID_BASE = 61000
MAX_LANES = 1000
PRIVATE_PREFIX = "hf-eval-worker-"

# --------------------------------------------------------------------------- Landlock ABI
# Syscall numbers: 444-446 in the unified table every architecture shares since 5.13
# (x86_64, aarch64, riscv64, ...); alpha is the exception (+110).
_SYS_BASE = 554 if platform.machine().startswith("alpha") else 444
SYS_LANDLOCK_CREATE_RULESET = _SYS_BASE
SYS_LANDLOCK_ADD_RULE = _SYS_BASE + 1
SYS_LANDLOCK_RESTRICT_SELF = _SYS_BASE + 2
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1

# The access rights, bit i in the order of <linux/landlock.h>: the filesystem's (REFER
# since ABI 2, TRUNCATE 3, IOCTL_DEV 5), the network's (ABI 4) and the scopes (ABI 6).
(FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR, FS_REMOVE_DIR, FS_REMOVE_FILE,
 FS_MAKE_CHAR, FS_MAKE_DIR, FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK,
 FS_MAKE_SYM, FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV) = (1 << bit for bit in range(16))
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

# Rights that make sense on a file (the kernel rejects directory rights on a file rule).
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
# Device nodes: read, write (CUDA opens /dev/nvidia* O_RDWR; everyone writes /dev/null),
# truncate (a shell's ``> /dev/null`` opens with O_TRUNC) and ioctl (CUDA drives the GPU
# through ioctls on /dev/nvidia*). Granted only to the nodes in DEVICE_NODES, not to all
# of /dev: a root worker (uid None) could otherwise read a raw disk and so the dataset.
DEVICE_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
PROC_SELF_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_READ_DIR
DEVICE_NODES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                "/dev/nvidia*", "/dev/nvidia-caps*")


def _abi_rights(abi: int) -> tuple[int, int, int]:
    """(handled fs rights, handled net rights, scopes) that Landlock ABI ``abi`` knows."""
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= FS_REFER
    if abi >= 3:
        fs |= FS_TRUNCATE
    if abi >= 5:
        fs |= FS_IOCTL_DEV
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class SandboxError(RuntimeError):
    """A wall that should be available could not be applied (the worker must not run)."""


@dataclass(frozen=True)
class Walls:
    """What the worker asks the OS to enforce before any candidate code runs."""

    uid: int | None
    """Drop to this uid and gid (only when running as root; never 0); None = keep."""
    readable: tuple[str, ...]
    """Directory trees (or files) the candidate may read and execute."""
    writable: tuple[str, ...]
    """Directory trees it may also write (its private dir)."""
    network: bool = False
    """Whether the candidate keeps the network. False: a fresh network namespace (no
    interfaces but lo) when root, and Landlock and seccomp restrict its sockets."""
    private_bytes: int | None = None
    """(root) Size of the tmpfs mounted on each writable tree, in bytes: what the worker
    writes lives in memory charged to its group, never on the host's disk, and vanishes
    with its mount namespace. None: no tmpfs on the writable trees."""
    shm_bytes: int = 1 << 30
    """(root) Size of the tmpfs mounted on /dev/shm, in bytes (memory charged to the
    worker's group, like the writable trees')."""


# --------------------------------------------------------------------------- libc helpers
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]
_libc.mount.restype = ctypes.c_int
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]
_libc.unshare.restype = ctypes.c_int
_libc.unshare.argtypes = [ctypes.c_int]

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_RDONLY = 1
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


def _os_error(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def _prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    result = _libc.prctl(option, arg2, arg3, 0, 0)
    if result < 0:
        raise _os_error(f"prctl({option})")
    return result


def _syscall(number: int, *args: int | ctypes.c_void_p) -> int:
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        raise _os_error(f"syscall {number}")
    return result


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise _os_error(f"mount {source} on {target}")


# --------------------------------------------------------------------------- Landlock
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is absent or disabled at boot."""
    if sys.platform != "linux":
        return 0
    result = _libc.syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(result), 0)


def _add_path_rule(ruleset_fd: int, path: str, access: int, handled: int) -> bool:
    """Allow ``access`` beneath ``path`` (file rights only on a file); False if absent."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= FILE_RIGHTS
        attr = _PathBeneathAttr(allowed_access=access & handled, parent_fd=fd)
        _syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset_fd),
                 ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(attr),
                 ctypes.c_uint32(0))
    except OSError as exc:
        raise SandboxError(f"Landlock rule for {path} rejected: {exc.strerror}") from exc
    finally:
        os.close(fd)
    return True


def _device_nodes() -> list[str]:
    return sorted({p for pattern in DEVICE_NODES for p in glob.glob(pattern)})


#: Files under ``/sys`` a worker may not read: the kernel's BTF, which may be mapped, and a
#: mapping keeps a sysfs file open after its descriptor is closed, with a structure no
#: cgroup charges (so the descriptor bound would not bound them).
SYS_HIDDEN = ("/sys/kernel/btf",)


def _sys_trees() -> list[tuple[str, bool]]:
    """``/sys`` less :data:`SYS_HIDDEN`, as Landlock rules: (path, listing only) for each
    directory on the way to a hidden one, and the whole of every other entry."""
    out: list[tuple[str, bool]] = []

    def walk(directory: str) -> None:
        out.append((directory, True))
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if path in SYS_HIDDEN:
                continue
            if any(hidden.startswith(path + "/") for hidden in SYS_HIDDEN):
                walk(path)
            else:
                out.append((path, False))

    try:
        walk("/sys")
    except OSError:
        return [("/sys", False)] if not any(os.path.exists(h) for h in SYS_HIDDEN) else []
    return out


def _apply_landlock(readable: Iterable[str], writable: Iterable[str], *, restrict_tcp: bool,
                    scope: bool = True, proc_tree_writable: bool = False) -> list[str]:
    """Create, fill and enforce a Landlock domain on the calling thread; return walls.

    ``/dev`` in ``readable`` gets directory listing only; the nodes in ``DEVICE_NODES``
    get DEVICE_RIGHTS and ``/dev/shm`` is writable (torch and CUDA put shared memory
    there). Other paths under ``/dev`` named in ``readable`` get DEVICE_RIGHTS too.
    ``/proc`` is readable, plus file writes under the caller's own ``/proc/<pid>`` (or
    under all of ``/proc`` with ``proc_tree_writable``, for a worker whose uid was dropped).
    """
    abi = landlock_abi()
    if abi < 1:
        raise SandboxError("Landlock is not available (kernel without CONFIG_SECURITY_LANDLOCK"
                           " or landlock missing from lsm=); the worker cannot be confined")
    fs, net, scoped = _abi_rights(abi)
    if not restrict_tcp:
        net = 0
    if not scope:
        scoped = 0
    attr = _RulesetAttr(handled_access_fs=fs, handled_access_net=net, scoped=scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    try:
        ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    except OSError as exc:
        raise SandboxError(f"Landlock ruleset could not be created: {exc.strerror}") from exc
    try:
        for path in readable:
            norm = os.path.normpath(path)
            if norm == "/dev":
                _add_path_rule(ruleset, norm, FS_READ_DIR, fs)
                for node in _device_nodes():
                    _add_path_rule(ruleset, node, DEVICE_RIGHTS | FS_READ_DIR, fs)
                _add_path_rule(ruleset, "/dev/shm", fs, fs)
            elif norm == "/proc":
                # CUDA's initialisation writes to a file of its own process under
                # /proc/<pid> (cudaGetDeviceCount fails with error 304 otherwise). With a
                # uid drop DAC limits /proc writes to the worker's own processes, so the
                # tree gets write (child processes can init CUDA too); else only the
                # caller's own /proc/<pid> does (threads included, children not): uid 0
                # without capabilities could still write many /proc/sys files.
                if proc_tree_writable:
                    _add_path_rule(ruleset, norm, READ_RIGHTS | PROC_SELF_RIGHTS, fs)
                else:
                    _add_path_rule(ruleset, norm, READ_RIGHTS, fs)
                    _add_path_rule(ruleset, f"/proc/{os.getpid()}", PROC_SELF_RIGHTS, fs)
            elif norm.startswith("/dev/"):
                _add_path_rule(ruleset, norm, DEVICE_RIGHTS | FS_READ_DIR, fs)
            elif norm == "/sys":
                for tree, listing in _sys_trees():
                    _add_path_rule(ruleset, tree, FS_READ_DIR if listing else READ_RIGHTS, fs)
            else:
                _add_path_rule(ruleset, norm, READ_RIGHTS, fs)
        for path in writable:
            _add_path_rule(ruleset, os.path.normpath(path), fs, fs)
        if _prctl(PR_GET_NO_NEW_PRIVS) != 1:
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
        try:
            _syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        except OSError as exc:
            raise SandboxError(f"landlock_restrict_self failed: {exc.strerror}") from exc
    finally:
        os.close(ruleset)
    walls = [f"landlock-abi{abi}"]
    if net:
        walls.append("landlock-net")
    if scoped:
        walls.append("landlock-scope")
    return walls


# --------------------------------------------------------------------------- mount namespace
def _traversable(st: os.stat_result, uid: int) -> bool:
    """Whether uid (gid == uid, no supplementary groups) may search a directory (DAC)."""
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == uid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def _blocking_ancestor(path: str, uid: int) -> str | None:
    """The topmost proper ancestor of ``path`` that ``uid`` cannot search, if any."""
    parts = Path(path).parts
    for i in range(2, len(parts)):
        ancestor = os.path.join(*parts[:i])
        if not _traversable(os.stat(ancestor), uid):
            return ancestor
    return None


def _make_reachable(trees: Iterable[str], uid: int) -> list[str]:
    """In the (private) mount namespace, make each tree reachable by ``uid``.

    The interpreter may live behind a directory the worker uid cannot search (pyenv under
    a ``0700`` ``/root``), and the worker must not get to search that directory (it holds
    ``~/.cache``). So the blocking ancestor is covered with a fresh tmpfs holding only a
    skeleton of ``0755`` directories, and each tree is bind-mounted back at its own path.
    The rest of the ancestor is then invisible to the worker, not merely unreadable. Trees
    whose own mode keeps ``uid`` out are left alone (fix their permissions instead).
    Returns the covered ancestors.
    """
    by_ancestor: dict[str, list[str]] = {}
    for tree in sorted({os.path.realpath(t) for t in trees if os.path.exists(t)}):
        ancestor = _blocking_ancestor(tree, uid)
        if ancestor is None:
            continue
        kept = by_ancestor.setdefault(ancestor, [])
        if not any(tree.startswith(k + os.sep) for k in kept):
            kept.append(tree)
    for ancestor, kept in by_ancestor.items():
        fds = {tree: os.open(tree, os.O_PATH | os.O_CLOEXEC) for tree in kept}
        try:
            _mount("tmpfs", ancestor, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
            for tree, fd in fds.items():
                if stat.S_ISDIR(os.fstat(fd).st_mode):
                    os.makedirs(tree, mode=0o755, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(tree), mode=0o755, exist_ok=True)
                    Path(tree).touch(mode=0o644)
                _mount(f"/proc/self/fd/{fd}", tree, None, MS_BIND | MS_REC)
        finally:
            for fd in fds.values():
                os.close(fd)
    return sorted(by_ancestor)


def _drop_bounding_caps() -> None:
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _clear_caps() -> None:
    header = _CapHeader(version=0x20080522, pid=0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise _os_error("capset")


def _thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


# --------------------------------------------------------------------------- seccomp
class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


#: Files and directories each of a worker's tmpfs mounts (its private directory and
#: ``/dev/shm``) may hold: every inode carries a security record no cgroup charges, and a
#: killed worker's exit frees them all where no signal reaches it (3 million files kept
#: one 32 s in the kernel past its TIMEOUT).
WORKER_INODES = 65536
#: Open descriptors a worker process may hold (``RLIMIT_NOFILE``, soft and hard): the
#: traditional default soft limit; a worker's harness holds under 20.
WORKER_FILES = 1024
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x06
#: Per architecture: (audit arch, first number of a foreign ABI on it or None,
#: ``socket``, the syscalls refused). Refused: the kernel keyrings (``add_key``,
#: ``request_key``, ``keyctl``), whose user keyring outlives every process of a uid and so
#: would carry data from one worker to the next of the same uid; ``userfaultfd``, which
#: lets a thread hold the kernel inside a copy (and so stall a freeze) for as long as it
#: likes; ``inotify`` and ``fanotify``, which would watch the audit's temporary files;
#: every way to queue data in socket buffers, memory no cgroup may charge to the
#: worker: ``socketpair``, ``connect``, datagram sockets, and every socket but UNIX
#: stream and seqpacket and plain TCP, since a netlink socket sends to its own port
#: without ``connect`` (8 MiB
#: queued a socket, for as many sockets as files it may open), and every ``setsockopt``
#: but those of the socket level (``SOL_SOCKET``): protocol options such as TCP's MD5
#: keys take option memory, up to 128 KiB a socket, that no cgroup charges either; and
#: at that level the options that allocate uncharged kernel objects (a reuseport group
#: for ``SO_REUSEPORT``, socket filters, a device binding: :data:`_SOCKET_OPTIONS_DENIED`);
#: ``perf_event_open``, whose events (copied into every child a process forks, with
#: no file of their own) and ring buffers are memory no cgroup charges; a seccomp filter
#: of the worker's own (``seccomp``, or ``prctl`` with PR_SET_SECCOMP: each thread may
#: stack filters, kernel memory no cgroup charges); native AIO (``io_setup``), whose
#: contexts count against a host-wide limit one worker could fill; extended attributes
#: (``setxattr``, ``lsetxattr``, ``fsetxattr``, ``setxattrat``), since a POSIX ACL on a file
#: of the worker's tmpfs takes up to 64 KiB of kernel memory no cgroup charges; NUMA
#: policies of a mapping (``mbind``, ``set_mempolicy_home_node``), which a shared tmpfs
#: mapping keeps on its file after the mapping is gone, in caches no cgroup charges;
#: ``memfd_secret``, whose pages are cut out of the kernel's direct map, splitting its
#: large pages for good (the host's, outliving the worker); ``mseal``, which no honest
#: kernel needs and which could fix the harness's own mappings in place;
#: ``sched_setattr``, whose utilisation clamps raise the clock of the cores the candidate
#: runs on where the host scales frequencies (a speed-up of the clock, not the kernel);
#: ``socket`` itself, ``bind`` and ``listen`` stay: CUDA's initialisation makes a
#: listening socket of its own;
#: io_uring (``io_uring_setup``, ``_enter``, ``_register``), whose operations never pass
#: through this filter; and every timer that fires while its owner is frozen
#: (``timer_create``, ``timerfd_create``, ``setitimer``, ``alarm``): armed before a reply,
#: their expiries (fanned out by a signalfd that many epoll instances watch) run in
#: interrupt context on the cores where the stand-in is then timed, which would raise its
#: floor and spread, the host time the guard holds a worker's claim to. A frozen thread's
#: own sleep (``nanosleep``, a futex or poll timeout) is cancelled by the freeze itself.
#: And ``ptrace``: a process that makes its parent its tracer (``PTRACE_TRACEME``) and
#: stops reports the stop to the worker's outer process, which no honest kernel needs.
#: And the calls that act on the host's page cache or disks for everyone: ``sync``,
#: ``syncfs`` and ``sync_file_range`` (writeback of every host file system, a stall for
#: other processes) and ``fadvise64`` (``POSIX_FADV_DONTNEED`` on the readable library
#: files drops them from the host's cache, slowing the next candidate's start).
_DENIED = {
    "x86_64": (0xC000003E, 0x40000000, 41,
               (248, 249, 250, 323, 253, 254, 294, 300, 301, 53, 42, 425, 426, 427,
                222, 283, 38, 37, 298, 317, 206, 188, 189, 190, 463, 237, 450, 447,
                462, 314, 101, 162, 306, 277, 221)),
    "aarch64": (0xC00000B7, None, 198,
                (217, 218, 219, 282, 26, 27, 262, 263, 199, 203, 425, 426, 427,
                 107, 85, 103, 241, 277, 0, 5, 6, 7, 463, 235, 450, 447, 462, 274, 117,
                 81, 267, 84, 223)),
}
#: Per architecture: ``unshare``, ``clone``, ``clone3``, ``setns``. A new user namespace
#: would hand the worker every capability inside it: with its own network namespace and
#: loopback up, kernel timers of TCP (pacing, retransmits) fire while the worker is frozen
#: and slow the stand-in, and socket buffers hold memory no cgroup charges to the worker.
_NAMESPACE_CALLS = {"x86_64": (272, 56, 435, 308), "aarch64": (97, 220, 435, 268)}
#: The socket calls among them (``socketpair``, ``connect``): allowed with the network.
_SOCKET_CALLS = {"x86_64": (53, 42), "aarch64": (199, 203)}
#: Per architecture: ``setsockopt``, allowed without the network at ``SOL_SOCKET`` only.
_SETSOCKOPT = {"x86_64": 54, "aarch64": 208}
_SOL_SOCKET = 1
#: Per architecture: ``prctl``, refused with PR_SET_SECCOMP as its option.
_PRCTL = {"x86_64": 157, "aarch64": 167}
#: Per architecture: ``fcntl``, refused with F_NOTIFY as its command (dnotify: the same
#: watch of other processes' file accesses as the refused inotify, through ``fcntl``),
#: and with every command that makes the kernel signal the worker when a file is ready or
#: touched (signal-driven I/O: an owner, a chosen signal, O_ASYNC; a lease): set on the
#: channel, a signal at each request's arrival ran the candidate's handler inside the
#: worker's receive, where its code could rewrite the request, and through a signal (32,
#: 33) that the C library keeps for itself and the worker cannot set back.
_FCNTL = {"x86_64": 72, "aarch64": 25}
#: Per architecture: ``ioctl``, refused with the requests that do what those ``fcntl``
#: commands do (FIOASYNC, FIOSETOWN, SIOCSPGRP).
_IOCTL = {"x86_64": 16, "aarch64": 29}
_IOCTL_DENIED = (0x5452, 0x8901, 0x8902)
#: Per architecture: ``madvise``, refused with MADV_MERGEABLE (and ``prctl`` with
#: PR_SET_MEMORY_MERGE): pages the kernel's same-page merging shares are no longer
#: charged to the worker's group alone, where the host runs it.
_MADVISE = {"x86_64": 28, "aarch64": 233}
MADV_MERGEABLE = 12
PR_SET_MEMORY_MERGE = 67
#: ``prctl`` refused too: core scheduling, which on a host with SMT turns on host-wide and
#: forces a core's other thread idle while a task of the worker's cookie runs.
PR_SCHED_CORE = 62
#: ... and names for anonymous mappings (``PR_SET_VMA``), each a string no cgroup charges.
PR_SET_VMA = 0x53564D41
#: ... and a parent-death signal other than SIGKILL: the worker's first process dies with
#: the process that started it, and a candidate that cleared the signal would outlive it.
PR_SET_PDEATHSIG = 1
_F_NOTIFY = 1026
#: F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE; and F_SETFL, refused with O_ASYNC set.
_FCNTL_DENIED = (8, 10, 15, 1024)
_F_SETFL, _O_ASYNC = 4, 0o20000
#: ``SOL_SOCKET`` options refused without the network: SO_REUSEPORT, SO_BINDTODEVICE and
#: SO_BINDTOIFINDEX (the same binding by index), SO_ATTACH_FILTER, SO_ATTACH_BPF,
#: SO_ATTACH_REUSEPORT_CBPF and _EBPF, SO_RESERVE_MEM (counted in the host-wide TCP memory).
_SOCKET_OPTIONS_DENIED = (15, 25, 26, 50, 51, 52, 62, 73)
#: The sockets a worker without the network may open: UNIX stream and seqpacket ones
#: (CUDA's own socket; no datagram socket, which ``sendto`` any socket bound at a path the
#: worker can see: ``SOCK_RAW`` is one on UNIX), and plain TCP (in a network namespace
#: whose loopback is down, and with ``connect`` refused, no TCP socket reaches a peer or
#: queues data; where no namespace can be made, Landlock's TCP rules hold, and they cover
#: TCP only: MPTCP, SCTP and the rest are refused).
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_STREAM, _SOCK_SEQPACKET = 1, 5
_IPPROTO_TCP = 6
_BPF_ALU_AND_K = 0x54


def _apply_seccomp(network: bool = False) -> list[str]:
    """A seccomp filter on this thread (inherited by every thread and process it starts):
    :data:`_DENIED` syscalls fail with EPERM, and so do a ``socket`` other than a UNIX
    stream or seqpacket one or a plain TCP one, a ``setsockopt`` at another level than
    ``SOL_SOCKET`` or of an option there in :data:`_SOCKET_OPTIONS_DENIED`, a ``prctl``
    that sets a seccomp filter, same-page merging, core scheduling, a name for a mapping or
    a parent-death signal other than SIGKILL, an ``fcntl``
    F_NOTIFY or one that asks for signals (F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE,
    O_ASYNC), an ``ioctl`` that does the same, a ``madvise`` MADV_MERGEABLE, a new user
    namespace (``unshare`` or ``clone`` with CLONE_NEWUSER, any ``setns``) and any syscall
    of another ABI (a 32-bit one) than the machine's; ``clone3``, whose flags lie in memory
    a filter cannot read, fails with ENOSYS (the C library then falls back to ``clone``);
    with ``network`` the socket calls stay allowed. Nothing where the machine is neither
    x86_64 nor aarch64 (the wall is then absent from the list)."""
    known = _DENIED.get(platform.machine())
    if known is None:
        return []
    arch, foreign, socket_nr, numbers = known
    unshare_nr, clone_nr, clone3_nr, setns_nr = _NAMESPACE_CALLS[platform.machine()]
    if network:
        numbers = tuple(n for n in numbers if n not in _SOCKET_CALLS[platform.machine()])
    deny = SECCOMP_RET_ERRNO | 1  # EPERM
    # (code, jump if true, jump if false, k): jumps name a label, resolved below
    program: list[tuple[int, str | int, str | int, int]] = [
        (_BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_BPF_JEQ_K, 0, "deny", arch),
        (_BPF_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    if foreign is not None:
        program.append((_BPF_JGE_K, "deny", 0, foreign))
    program += [(_BPF_JEQ_K, "allow" if network else "socket", 0, socket_nr),
                (_BPF_JEQ_K, "allow" if network else "socket option", 0,
                 _SETSOCKOPT[platform.machine()]),
                (_BPF_JEQ_K, "prctl", 0, _PRCTL[platform.machine()]),
                (_BPF_JEQ_K, "fcntl", 0, _FCNTL[platform.machine()]),
                (_BPF_JEQ_K, "ioctl", 0, _IOCTL[platform.machine()]),
                (_BPF_JEQ_K, "madvise", 0, _MADVISE[platform.machine()]),
                (_BPF_JEQ_K, "namespace", 0, unshare_nr),
                (_BPF_JEQ_K, "namespace", 0, clone_nr),
                (_BPF_JEQ_K, "enosys", 0, clone3_nr),
                (_BPF_JEQ_K, "deny", 0, setns_nr)]
    program += [(_BPF_JEQ_K, "deny", 0, number) for number in numbers]
    program.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))  # none of them
    labels = {"socket": len(program)}  # every jump goes forward
    program += [(_BPF_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the family
                (_BPF_JEQ_K, "unix socket", 0, _AF_UNIX),
                (_BPF_JEQ_K, "ip socket", 0, _AF_INET),
                (_BPF_JEQ_K, "ip socket", "deny", _AF_INET6)]
    labels["unix socket"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 24),  # seccomp_data.args[1], low half: the type
                (_BPF_ALU_AND_K, 0, 0, 0xF),  # (less SOCK_NONBLOCK and SOCK_CLOEXEC)
                (_BPF_JEQ_K, "allow", 0, _SOCK_STREAM),
                (_BPF_JEQ_K, "allow", "deny", _SOCK_SEQPACKET)]
    labels["ip socket"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 24),
                (_BPF_ALU_AND_K, 0, 0, 0xF),
                (_BPF_JEQ_K, 0, "deny", _SOCK_STREAM),
                (_BPF_LD_W_ABS, 0, 0, 32),  # seccomp_data.args[2], low half: the protocol
                (_BPF_JEQ_K, "allow", 0, 0),
                (_BPF_JEQ_K, "allow", "deny", _IPPROTO_TCP)]
    labels["socket option"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 24),  # seccomp_data.args[1], low half: the level
                (_BPF_JEQ_K, 0, "deny", _SOL_SOCKET),
                (_BPF_LD_W_ABS, 0, 0, 32)]  # seccomp_data.args[2], low half: the option
    program += [(_BPF_JEQ_K, "deny", 0, option) for option in _SOCKET_OPTIONS_DENIED]
    program.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    labels["prctl"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the option
                (_BPF_JEQ_K, "deny", 0, PR_SET_SECCOMP),
                (_BPF_JEQ_K, "deny", 0, PR_SCHED_CORE),
                (_BPF_JEQ_K, "deny", 0, PR_SET_VMA),
                (_BPF_JEQ_K, "death signal", 0, PR_SET_PDEATHSIG),
                (_BPF_JEQ_K, "deny", "allow", PR_SET_MEMORY_MERGE)]
    labels["death signal"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 24),  # seccomp_data.args[1], low half: the signal
                (_BPF_JEQ_K, "allow", "deny", signal.SIGKILL)]
    labels["madvise"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 32),  # seccomp_data.args[2], low half: the advice
                (_BPF_JEQ_K, "deny", "allow", MADV_MERGEABLE)]
    labels["fcntl"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 24),  # seccomp_data.args[1], low half: the command
                (_BPF_JEQ_K, "deny", 0, _F_NOTIFY)]
    program += [(_BPF_JEQ_K, "deny", 0, command) for command in _FCNTL_DENIED]
    program += [(_BPF_JEQ_K, 0, "allow", _F_SETFL),
                (_BPF_LD_W_ABS, 0, 0, 32),  # seccomp_data.args[2], low half: the flags
                (_BPF_ALU_AND_K, 0, 0, _O_ASYNC),
                (_BPF_JEQ_K, "allow", "deny", 0)]
    labels["ioctl"] = len(program)
    program.append((_BPF_LD_W_ABS, 0, 0, 24))  # seccomp_data.args[1], low half: the request
    program += [(_BPF_JEQ_K, "deny", 0, request) for request in _IOCTL_DENIED]
    program.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    labels["namespace"] = len(program)
    program += [(_BPF_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low half: the flags
                (_BPF_ALU_AND_K, 0, 0, CLONE_NEWUSER),
                (_BPF_JEQ_K, "allow", "deny", 0)]
    labels["enosys"] = len(program)
    program.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | 38))  # ENOSYS
    labels["allow"] = len(program)
    program.append((_BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    labels["deny"] = len(program)
    program.append((_BPF_RET_K, 0, 0, deny))

    def offset(at: int, target: str | int) -> int:
        jump = target if isinstance(target, int) else labels[target] - (at + 1)
        assert 0 <= jump < 256, "a classic BPF jump goes forward, at most 255 places"
        return jump

    code = [_SockFilter(op, offset(at, jt), offset(at, jf), k)
            for at, (op, jt, jf, k) in enumerate(program)]
    filters = (_SockFilter * len(code))(*code)
    fprog = _SockFprog(len(code), ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise _os_error("seccomp filter")
    return ["seccomp"]


# --------------------------------------------------------------------------- confine
def confine(walls: Walls) -> list[str]:
    """Apply the walls to the calling process (irreversible); return the names of the walls
    applied, e.g. ["netns", "landlock-abi7", "uid:61000", "no_new_privs", "rlimit_core"].

    Order matters: the namespaces and mounts while still root (Landlock forbids mounting),
    then no_new_privs and Landlock, then the bounding set (needs CAP_SETPCAP), then
    setgroups([])/setgid/setuid, then non-dumpable (the uid change resets it). Raises
    SandboxError with a one-line reason if a requested wall cannot be applied when it
    should be available (no Landlock, root but setuid fails, more than one thread).
    Not root, ``walls.uid`` is ignored (no uid can be dropped to) and no namespace is made;
    the returned list says so by lacking ``uid:N``/``netns``.
    """
    if sys.platform != "linux":
        raise SandboxError(f"confinement needs Linux (Landlock); this is {sys.platform}")
    threads = _thread_count()
    if threads != 1:
        raise SandboxError(f"confine() needs a single-threaded process, this one has {threads} "
                           "threads (Landlock confines the calling thread only): call it "
                           "before importing torch")
    root = os.geteuid() == 0
    if walls.uid is not None and root and walls.uid == 0:
        raise SandboxError("Walls.uid must not be 0")
    applied: list[str] = []
    readable = tuple(walls.readable)
    writable = tuple(walls.writable)
    if root:
        flags = CLONE_NEWNS | (0 if walls.network else CLONE_NEWNET)
        if _libc.unshare(flags) != 0:
            raise SandboxError(f"unshare failed as root: {_os_error('unshare').strerror}")
        if not walls.network:
            applied.append("netns")
        try:
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            if os.getpid() == 1:  # the first process of its own PID namespace
                try:  # a /proc that shows this namespace's processes only
                    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                    applied.append("procfs")
                except OSError:
                    pass  # the host's /proc stays (a container may forbid a new one)
            if os.path.isdir("/proc/pressure"):  # host-wide PSI triggers: out of reach
                _mount("tmpfs", "/proc/pressure", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC
                       | MS_RDONLY, "mode=0555,size=4k")
                applied.append("pressure-hidden")
            if os.path.isdir("/dev/shm"):
                _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
                       f"mode=1777,size={walls.shm_bytes},nr_inodes={WORKER_INODES}")
            if os.path.isdir("/sys/fs/cgroup"):  # other workers' groups: out of sight
                _mount("tmpfs", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC
                       | MS_RDONLY, "mode=0555,size=4k")
                applied.append("cgroupfs-hidden")
            if walls.private_bytes is not None:
                owner = "" if walls.uid is None else f",uid={walls.uid},gid={walls.uid}"
                for tree in writable:
                    _mount("tmpfs", tree, "tmpfs", MS_NOSUID | MS_NODEV,
                           f"mode=0700,size={walls.private_bytes},nr_inodes={WORKER_INODES}"
                           f"{owner}")
                if os.getcwd() in writable:  # the cwd is the tmpfs now, not what it covers
                    os.chdir(os.getcwd())
                applied.append("tmpfs-private")
            if walls.uid is not None:
                _make_reachable(readable + writable, walls.uid)
        except OSError as exc:
            raise SandboxError(f"private mount namespace: {exc}") from exc
        applied.append("mountns")
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (1, 1))
        applied.append("rlimit_core")
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        bound = WORKER_FILES if hard == resource.RLIM_INFINITY else min(hard, WORKER_FILES)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, bound), bound))
        applied.append("rlimit_nofile")
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        applied.append("no_new_privs")
    except OSError as exc:
        raise SandboxError(f"rlimit/no_new_privs: {exc}") from exc
    applied += _apply_landlock(readable, writable, restrict_tcp=not walls.network,
                               proc_tree_writable=root and walls.uid is not None)
    try:
        applied += _apply_seccomp(network=walls.network)
    except OSError as exc:
        raise SandboxError(f"seccomp: {exc}") from exc
    if root:
        try:
            _drop_bounding_caps()
        except OSError as exc:
            raise SandboxError(f"dropping the capability bounding set: {exc}") from exc
        applied.append("capbset")
        if walls.uid is not None:
            uid = walls.uid
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            except OSError as exc:
                raise SandboxError(f"dropping to uid {uid} failed: {exc}") from exc
            if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3 or os.getgroups():
                raise SandboxError(f"uid drop to {uid} did not stick")
            try:
                os.setuid(0)
            except PermissionError:
                pass
            else:
                raise SandboxError("uid 0 could be regained after the uid drop")
            applied.append(f"uid:{uid}")
        else:
            try:
                _clear_caps()
            except OSError as exc:
                raise SandboxError(f"clearing capabilities: {exc}") from exc
            applied.append("caps")
    try:
        _prctl(PR_SET_DUMPABLE, 0)
    except OSError as exc:
        raise SandboxError(f"PR_SET_DUMPABLE: {exc}") from exc
    applied.append("nondumpable")
    return applied


# --------------------------------------------------------------------------- readable trees
def _cache_roots() -> list[Path]:
    """The harness cache (same rule as hf_eval.data.cache.cache_dir, without creating it) and
    ``~/.cache`` (pip, torch hub, Hugging Face, Triton caches of the parent's user)."""
    roots = [Path.home() / ".cache"]
    env = os.environ.get("HF_EVAL_CACHE")
    roots.append(Path(env) if env else Path.home() / ".cache" / "inference-kernels")
    return roots


#: Dataset roots this process audits (``protect``): unreadable to every worker.
_protected: list[Path] = []


def protect(dataset_root: str | os.PathLike[str]) -> None:
    """Keep ``dataset_root`` out of every worker's readable trees from now on.

    The audit registers the root it reads, so the rule holds wherever the harness is
    installed: in a clone the root is also the package's checkout, but an installed
    wheel lives in site-packages and the dataset is wherever ``--root`` says.
    """
    path = Path(dataset_root).resolve()
    if path not in _protected:
        _protected.append(path)


def _default_dataset_root() -> Path | None:
    """The checkout holding hf_eval when it is a dataset (a clone, an editable install);
    None for an installed wheel, whose parent directory is site-packages' and no dataset."""
    checkout = Path(hf_eval.__file__).resolve().parent.parent
    return checkout if (checkout / "definitions").is_dir() else None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def default_readable(dataset_root: str | os.PathLike[str] | None = None,
                     exclude: Iterable[str | os.PathLike[str]] = ()) -> tuple[str, ...]:
    """The trees a Python+torch worker needs to run: sys.base_prefix, sys.prefix, every
    sys.path entry that is a directory and is not (inside) the dataset root, plus /usr,
    /lib, /lib64, /bin, /etc, /dev, /proc, /sys, /opt if present, the CUDA install if any
    (CUDA_HOME, CUDA_PATH, /usr/local/cuda*, /usr/local/nvidia), and the hf_eval package
    directory itself. NOT the dataset root or ~/.cache.

    ``dataset_root`` defaults to the checkout that holds hf_eval when that checkout is a
    dataset (``definitions/``; an editable install or ``python -m`` puts it on sys.path),
    and that checkout stays excluded when another root is given. Every root passed to
    :func:`protect` (the audit registers the one it reads, wherever the package is
    installed) is excluded as well. The
    ``''`` entry (the cwd) is never granted. Any candidate tree inside, or containing, a
    dataset root, the harness cache, ``~/.cache`` or an ``exclude`` path is left out (a
    tree containing one would expose it), except that the
    interpreter prefixes and the hf_eval directory are kept when merely inside one (a venv
    in the checkout is fine: Landlock grants the venv tree, not its parent).
    """
    roots = [] if dataset_root is None else [Path(dataset_root)]
    roots += _protected  # every root an audit of this process reads (``protect``)
    checkout = _default_dataset_root()
    if checkout is not None:
        roots.append(checkout)  # the repository's own dataset, whichever one is audited
    banned = [p.resolve() for p in [*roots, *_cache_roots(), *map(Path, exclude)]]
    # Never a tree holding the temp root: other workers' private dirs and the parent's
    # temporary files live there (a venv somewhere under it stays allowed).
    containers = [*banned, Path(tempfile.gettempdir()).resolve()]
    package = Path(hf_eval.__file__).resolve().parent
    required = [Path(sys.base_prefix), Path(sys.prefix), package]
    system = [Path(p) for p in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc",
                                "/dev", "/proc", "/sys", "/opt", "/usr/local/nvidia")]
    cuda = [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    cuda += [Path(p) for p in sorted(glob.glob("/usr/local/cuda*"))]
    entries = [Path(p) for p in sys.path if p]  # not '' (the cwd: often /tmp or the root)
    out: list[str] = []
    for candidate in [*required, *system, *cuda, *entries]:
        if not candidate.is_absolute() or not candidate.exists():
            continue
        resolved = candidate.resolve()
        if candidate in entries and not resolved.is_dir():
            continue  # zip files and path hooks
        if any(_inside(b, resolved) for b in containers):
            continue  # would expose a banned tree
        if candidate not in required and any(_inside(resolved, b) for b in banned):
            continue
        if str(resolved) not in out:
            out.append(str(resolved))
    return tuple(out)


# --------------------------------------------------------------------------- parent side
def worker_uid(lane: int) -> int | None:
    """A dedicated uid per audit lane (61000 + lane) when running as root, else None;
    dedicated so reap() of one lane never touches another lane's worker."""
    if not 0 <= lane < MAX_LANES:
        raise ValueError(f"lane {lane} outside 0..{MAX_LANES - 1}")
    return WORKER_UID_BASE + lane if os.geteuid() == 0 else None


def private_dir(uid: int | None) -> Path:
    """Parent side: a fresh temporary directory for one worker (mode 0700), chowned to uid
    when given. The worker's HOME, TMPDIR and compiler caches point into it (private_env)."""
    path = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX)).resolve()
    os.chmod(path, 0o700)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


def private_env(path: Path) -> dict[str, str]:
    """Environment entries pointing every per-user cache and temp location into ``path``
    (merge them into the worker's environment): the rest of the disk is not writable, and
    a shared cache would let one candidate's compiled artefacts reach another's run."""
    p = str(path)
    return {"HOME": p, "TMPDIR": p, "TMP": p, "TEMP": p, "XDG_CACHE_HOME": f"{p}/.cache",
            "XDG_CONFIG_HOME": f"{p}/.config", "TRITON_CACHE_DIR": f"{p}/.triton",
            "TORCHINDUCTOR_CACHE_DIR": f"{p}/inductor", "CUDA_CACHE_PATH": f"{p}/.nv",
            "PYTHONPYCACHEPREFIX": f"{p}/pycache", "MPLCONFIGDIR": f"{p}/.config"}


def remove_private_dir(path: Path) -> None:
    """Parent side: delete the worker's private dir and everything in it (after reap(), so
    nothing is still writing). Modes the candidate removed are restored first where needed;
    symlinks inside are removed, never followed."""
    path = Path(path)
    if not path.name.startswith(PRIVATE_PREFIX):
        raise ValueError(f"{path} is not a worker private dir")

    top = str(path)

    def fix(func: object, failed: str, exc_info: object) -> None:
        parent = os.path.dirname(failed)
        if parent.startswith(top):  # never chmod anything outside the private dir
            os.chmod(parent, 0o700)
        if os.path.isdir(failed) and not os.path.islink(failed):
            os.chmod(failed, 0o700)
            shutil.rmtree(failed, **handler)
        else:
            os.unlink(failed)

    handler: dict[str, object] = {"onexc" if sys.version_info >= (3, 12) else "onerror": fix}
    if path.exists():
        shutil.rmtree(path, **handler)


def _status_uids(pid: int) -> tuple[set[int], bool] | None:
    """The real and effective uids of ``pid`` and whether it is a zombie; None if gone.
    Read as bytes: its ``Name`` line is whatever the process named itself (any bytes)."""
    try:
        text = Path(f"/proc/{pid}/status").read_bytes().decode("utf-8", "replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    uids: set[int] = set()
    zombie = False
    for line in text.split("\n"):  # not splitlines: a name may hold \x1c, \x85, ...
        if line.startswith("Uid:"):
            uids = set(map(int, line.split()[1:3]))
        elif line.startswith("State:"):
            zombie = line.split()[1] in ("Z", "X")
    if zombie:  # its main thread; a process whose main thread ended may run on in others
        zombie = not any(_task_running(pid, tid) for tid in _tasks(pid))
    return uids, zombie


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone meanwhile
        return []


def _task_running(pid: int, tid: str) -> bool:
    """Whether thread ``tid`` of ``pid`` is alive (not a zombie, not gone)."""
    try:
        status = Path(f"/proc/{pid}/task/{tid}/status").read_bytes()
    except OSError:
        return False
    for line in status.split(b"\n"):
        if line.startswith(b"State:"):
            return line.split()[1] not in (b"Z", b"X")
    return False


def _live_pids(uid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _status_uids(int(name))
            if info is not None and uid in info[0] and not info[1]:
                pids.append(int(name))
    return pids


def reap(uid: int, timeout: float = 5.0) -> int:
    """Parent side (root): SIGKILL every process whose real or effective uid is ``uid``,
    until none is left, so nothing a candidate started outlives its worker; return how
    many were killed. Each pid is pinned with a pidfd and its uid re-read before the
    signal, so a pid recycled by another uid's process in between is never hit. Zombies
    count as gone. Raises SandboxError if some survive ``timeout`` seconds."""
    if uid == 0 or uid == os.getuid() or uid == os.geteuid():
        raise ValueError(f"refusing to reap uid {uid}")
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while True:
        alive = [pid for pid in _live_pids(uid) if pid != os.getpid()]
        if not alive:
            return len(killed)
        if time.monotonic() > deadline:
            raise SandboxError(f"processes of uid {uid} survived SIGKILL: {alive[:10]}")
        for pid in alive:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                info = _status_uids(pid)
                if info is None or uid not in info[0]:
                    continue
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
            finally:
                os.close(fd)
        time.sleep(0.01)


def harden_parent() -> None:
    """Mark the calling process (the audit) non-dumpable: no process of the same uid,
    e.g. a candidate that escaped Landlock but not the uid, can ptrace it or read its
    ``/proc/<pid>/mem``, ``environ`` or ``maps`` (root with CAP_SYS_PTRACE still can).

    Trade-off: it equally stops the user's own debugging tools (gdb/py-spy attach, which
    then need root), makes ``/proc/<pid>/`` files root-owned, and disables core dumps of
    the audit; so it is a function the audit calls, not an import side effect. Children
    inherit the flag until they execve a program."""
    if sys.platform != "linux":
        return
    try:
        _prctl(PR_SET_DUMPABLE, 0)
    except OSError as exc:
        raise SandboxError(f"PR_SET_DUMPABLE: {exc}") from exc
    if _prctl(PR_GET_DUMPABLE) != 0:
        raise SandboxError("the parent is still dumpable")


def is_dumpable() -> bool:
    """Whether the calling process is dumpable (for checks and tests)."""
    return _prctl(PR_GET_DUMPABLE) == 1

