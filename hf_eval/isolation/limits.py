"""One worker's control group: its memory and process caps, its freezing, its end.

Each worker gets a cgroup of its own, made by the audit under the audit's own group
before the worker starts; the worker's outer process joins it before it forks the
candidate's process, so every process and thread the candidate ever makes is a member,
however it forks, whatever session or uid it takes. Both hierarchies are served:

* **cgroup v1** (``memory``, ``pids`` and ``freezer`` mounted under ``/sys/fs/cgroup``):
  ``memory.limit_in_bytes``, ``pids.max``, ``freezer.state``.
* **cgroup v2** (the unified hierarchy): ``cgroup.freeze`` and ``cgroup.kill`` always;
  ``memory.max`` and ``pids.max`` where the audit's own group delegates those
  controllers to its children (a container's group that holds processes itself cannot).

What a group gives:

* **Memory cap** (``memory-cap``): an out-of-memory kill inside the group ends the worker
  only; the audit reads the group's OOM counter and says so. The worker's private
  directory and ``/dev/shm`` are tmpfs mounts in its own mount namespace, sized, and
  charged to this group.
* **Process cap** (``pids-cap``): processes and threads together (a fork bomb fails in
  the candidate, not in the audit).
* **Open-file table** (``file-table``): the host's ``fs.file-max`` is raised, where it is
  smaller, above what every live worker group could open within its memory cap
  (:func:`reserve_file_table`), so no worker can leave the host without files.
* **Freezing**: the audit freezes a candidate's group while it times the stand-in, so no
  thread of the candidate can slow the stand-in (and so inflate the cost subtracted from
  the candidate's own time); and it ends a worker by killing every member at once.

Where a cap is missing, :mod:`hf_eval.isolation.process` falls back on per-process
limits: ``RLIMIT_NPROC`` of the worker's own uid for processes, ``RLIMIT_AS`` on a CPU
worker for memory, and always ``oom_score_adj`` 1000 (the kernel's OOM killer picks the
worker first). Where no group can be made (not root), the report's ``isolation`` field
lacks ``cgroup``; the PID namespace still ends everything with the worker.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "freezer")
#: (cgroup v1) Used where mounted and writable: the worker's CPU weight.
OPTIONAL_CONTROLLERS = ("cpu",)
#: The worker group's CPU weight against the audit's (v2 ``cpu.weight``, default 100;
#: v1 ``cpu.shares``, default 1024): the lowest, so a candidate's busy processes cannot
#: starve the audit's own work (references, judging, the stand-in) while it runs.
CPU_WEIGHT = {"cpu.weight": 1, "cpu.shares": 2}


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = value.strip().lower().removesuffix("b").removesuffix("i")
    scale = units.get(text[-1:], 1)
    try:
        return int(float(text.rstrip("kmg")) * scale)
    except ValueError:
        raise ValueError(f"{name}={value!r}: not a size (e.g. 8G, 512M)") from None


def _physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass(frozen=True)
class Limits:
    """The caps of one worker (environment variables override the defaults)."""

    memory_bytes: int
    """Host memory of the worker's group in bytes, tmpfs pages included
    (``HF_EVAL_WORKER_MEMORY``; default half the machine's memory, at least 4 GiB)."""
    pids: int
    """Processes and threads (``HF_EVAL_WORKER_PIDS``; default 512: torch's threads on a
    machine of a few hundred cores fit, and each may own a table of 1,024 descriptors,
    so this bounds the kernel memory no cgroup charges that epoll instances hold, 256
    bytes each: 128 MiB at 512)."""
    private_bytes: int
    """The size in bytes of the private directory's tmpfs (``HF_EVAL_WORKER_DISK``;
    default 4 GiB)."""
    shm_bytes: int
    """The size in bytes of ``/dev/shm``'s tmpfs (``HF_EVAL_WORKER_SHM``; default 1 GiB)."""
    kept_lent_bytes: int = 1 << 30
    """A solution's worker is kept for its next workload only while the memory the audit
    lent it for earlier workloads holds at most this many bytes
    (``HF_EVAL_WORKER_KEPT_LENT``; default a quarter of the memory the worker's cap
    leaves the rest of the machine, at least 1 GiB: 16 GiB on a 128 GiB host): the audit
    wrote those pages, so they are charged to its group, not the worker's, and a worker
    can keep them alive past the workload out of sight (mapped, by a descriptor, in a
    pipe). Past it, the next workload gets a new worker."""

    @classmethod
    def from_environment(cls) -> Limits:
        memory = _env_bytes("HF_EVAL_WORKER_MEMORY", max(4 << 30, _physical_memory() // 2))
        left = max(0, _physical_memory() - memory)
        return cls(memory_bytes=memory,
                   pids=int(os.environ.get("HF_EVAL_WORKER_PIDS", "512")),
                   private_bytes=_env_bytes("HF_EVAL_WORKER_DISK", 4 << 30),
                   shm_bytes=_env_bytes("HF_EVAL_WORKER_SHM", 1 << 30),
                   kept_lent_bytes=_env_bytes("HF_EVAL_WORKER_KEPT_LENT",
                                              max(1 << 30, left // 4)))


def _unified() -> bool:
    return (ROOT / "cgroup.controllers").is_file()


def _own_group(controller: str) -> Path | None:
    """This process's group in ``controller``'s hierarchy ("" for the unified one)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, names, path = line.split(":", 2)
        if controller == "" and number == "0" and names == "":
            return ROOT / path.lstrip("/")
        if controller and controller in names.split(","):
            base = ROOT / controller
            return base / path.lstrip("/") if base.is_dir() else None
    return None


def _parents() -> dict[str, Path] | None:
    """Where worker groups go: per v1 controller, or ``{"": group}`` for cgroup v2."""
    if os.geteuid() != 0:
        return None
    if _unified():
        own = _own_group("")
        if own is None or not (own / "cgroup.freeze").exists() or not os.access(own, os.W_OK):
            return None
        return {"": own}
    found = {c: _own_group(c) for c in CONTROLLERS}
    if any(p is None or not os.access(p, os.W_OK) for p in found.values()):
        return None
    for controller in OPTIONAL_CONTROLLERS:
        path = _own_group(controller)
        if path is not None and os.access(path, os.W_OK):
            found[controller] = path
    return found


def available() -> bool:
    """Whether worker groups can be made here (root, and cgroup v1 or v2)."""
    return _parents() is not None


#: Whether this process has swept the groups that dead audits left (once).
_SWEPT: list[int] = []


def sweep(parents: dict[str, Path]) -> int:
    """Remove the worker groups that audits no longer running left behind (killed before
    they could remove them), their members killed first; how many were removed."""
    removed = 0
    for controller, parent in parents.items():
        for path in parent.glob("hf-eval-worker-*-*"):
            owner = path.name.split("-")[3]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue
            stale = Group({controller: path}, Limits(0, 0, 0, 0), unified=controller == "")
            if stale.kill(timeout=2.0):
                stale.remove()
                removed += not path.exists()
    return removed


#: The least memory an open file costs its group (the kernel's ``struct file``, charged
#: to the opener's memory group, takes 256 bytes on Linux 6; half that, to be safe).
FILE_CHARGE_BYTES = 128
FILE_MAX = Path("/proc/sys/fs/file-max")
FILE_NR = Path("/proc/sys/fs/file-nr")


def reserve_file_table(parents: dict[str, Path], memory_bytes: int) -> bool:
    """Make the host's open-file table (``fs.file-max``, one count for every process)
    larger than every live worker group could fill within its memory cap, so a worker
    that opens files until its cap is reached fails alone and never leaves the audit, its
    stand-in or another process of the host without a file. Each open file is charged to
    its opener's group, so the caps still bound the memory; the kernel sizes the table
    from the machine's memory (a tenth of it at 1 KiB a file), which a group capped at
    half that memory outgrows twentyfold. Raised only, never lowered, and left so (another
    audit may be counting on it). True when the table is large enough."""
    parent = parents.get("", parents.get("memory"))
    groups = 1 + (len(list(parent.glob("hf-eval-worker-*"))) if parent is not None else 0)
    try:
        allocated = int(FILE_NR.read_text().split()[0])
        current = int(FILE_MAX.read_text())
        wanted = allocated + groups * (memory_bytes // FILE_CHARGE_BYTES)
        if current < wanted:
            FILE_MAX.write_text(str(wanted))
            return int(FILE_MAX.read_text()) >= wanted
    except (OSError, ValueError, IndexError):
        return False
    return True


#: Seconds :meth:`Group.kill` waits for its group to freeze before it signals (cgroup v1,
#: where no ``cgroup.kill`` ends a group at once).
KILL_FREEZE_S = 0.2


class Group:
    """A worker's group (v2) or groups (v1, one per controller); :meth:`create` returns
    None where none can be made."""

    def __init__(self, paths: dict[str, Path], limits: Limits, unified: bool) -> None:
        self.paths = paths
        self.limits = limits
        #: cgroup v2 (one group), else v1 (one group per controller).
        self.unified = unified
        #: The caps the group enforces ("memory-cap", "pids-cap", "cpu-weight").
        self.caps: list[str] = []

    @property
    def _any(self) -> Path:
        return next(iter(self.paths.values()))

    @classmethod
    def create(cls, limits: Limits) -> Group | None:
        parents = _parents()
        if parents is None:
            return None
        if not _SWEPT:
            _SWEPT.append(sweep(parents))
        name = f"hf-eval-worker-{os.getpid()}-{secrets.token_hex(4)}"
        group = cls({}, limits, unified="" in parents)
        try:
            for controller, parent in parents.items():
                path = parent / name
                path.mkdir()
                group.paths[controller] = path
            caps = {"memory-cap": ("memory.max" if group.unified else
                                   "memory.limit_in_bytes", limits.memory_bytes),
                    "pids-cap": ("pids.max", limits.pids)}
            for cap, (filename, value) in caps.items():
                where = group.paths["" if group.unified else cap.split("-")[0]] / filename
                if where.exists():
                    where.write_text(str(value))
                    group.caps.append(cap)
            for filename, weight in CPU_WEIGHT.items():
                where = group.paths.get("" if group.unified else "cpu")
                if where is not None and (where / filename).exists():
                    (where / filename).write_text(str(weight))
                    group.caps.append("cpu-weight")
            if group.unified and (group._any / "memory.swap.max").exists():
                (group._any / "memory.swap.max").write_text("0")
        except OSError:
            group.remove()
            return None
        if "memory-cap" in group.caps and reserve_file_table(parents, limits.memory_bytes):
            group.caps.append("file-table")
        return group

    @classmethod
    def of_join_files(cls, files: list[str]) -> Group:
        """The group whose :meth:`join_files` these are (to end it from another process)."""
        paths = {}
        for file in files:
            path = Path(file).parent
            if _unified():
                paths[""] = path
            else:  # /sys/fs/cgroup/<controller>/.../<group>/cgroup.procs
                paths[path.relative_to(ROOT).parts[0]] = path
        return cls(paths, Limits(0, 0, 0, 0), unified="" in paths)

    def join_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes its pid into to join."""
        return [str(p / "cgroup.procs") for p in self.paths.values()]

    def members(self) -> list[int]:
        try:
            text = (self._any / "cgroup.procs").read_text()
        except (OSError, StopIteration):
            return []
        return [int(p) for p in text.split()]

    def _set_frozen(self, frozen: bool, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        try:
            if self.unified:
                (self._any / "cgroup.freeze").write_text("1" if frozen else "0")
                want = f"frozen {1 if frozen else 0}"
                while want not in (self._any / "cgroup.events").read_text().splitlines():
                    if time.monotonic() > deadline:
                        return False
                    time.sleep(0.0005)
                return True
            if "freezer" not in self.paths:
                return False
            path = self.paths["freezer"] / "freezer.state"
            state = "FROZEN" if frozen else "THAWED"
            path.write_text(state)
            while path.read_text().strip() != state:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.0005)
        except OSError:
            return False
        return True

    def freeze(self, timeout: float = 5.0) -> bool:
        """Stop every member (they keep their state); True once all are frozen within
        ``timeout`` seconds."""
        return self._set_frozen(True, timeout)

    def thaw(self) -> bool:
        return self._set_frozen(False)

    def kill(self, timeout: float = 5.0) -> bool:
        """SIGKILL every member, none able to fork meanwhile; True once the group is
        empty."""
        killed = False
        if self.unified and (self._any / "cgroup.kill").exists():
            try:
                (self._any / "cgroup.kill").write_text("1")
                killed = True
            except OSError:
                pass
        if not killed:
            # Frozen, no member can fork between the signals. A member held in the kernel
            # (a long page-table walk, say) keeps the group from freezing: the signals
            # go out after KILL_FREEZE_S all the same, and again to whatever is left.
            self.freeze(KILL_FREEZE_S)
            self._signal_members()
            self.thaw()
        deadline = time.monotonic() + timeout
        while self.members():
            if time.monotonic() > deadline:
                return False
            if not killed:
                self._signal_members()
            time.sleep(0.002)
        return True

    def _signal_members(self) -> None:
        for pid in self.members():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a member for the group's memory limit."""
        name = "memory.events" if self.unified else "memory.oom_control"
        try:
            text = (self.paths["" if self.unified else "memory"] / name).read_text()
        except OSError:
            return False
        fields = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(fields.get("oom_kill", "0")) > 0

    def remove(self) -> None:
        """Remove the (empty) groups, their memory reclaimed first: page cache charged to
        a group (files a candidate read back after evicting them) would otherwise keep it
        alive, removed but not freed, for as long as those pages stay cached."""
        memory = self.paths.get("" if self.unified else "memory")
        if memory is not None:
            name, value = (("memory.reclaim", str(1 << 40)) if self.unified
                           else ("memory.force_empty", "0"))
            try:
                (memory / name).write_text(value)
            except OSError:
                pass  # (nothing left to reclaim is an error on v2: fine)
        for path in self.paths.values():
            try:
                path.rmdir()
            except OSError:
                pass
