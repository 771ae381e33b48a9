"""Limits of the worker's processes, each tried: a core dump (a core limit of 0 stops a
core file, not a dump piped to the host's helper, and an ``execve`` makes a process
dumpable again: only a hard limit of 1 byte stops both), more open descriptors (each
epoll instance holds 256 bytes of kernel memory no cgroup charges, so the descriptors a
process may hold bound what it keeps outside its group), same-page merging
(``prctl(PR_SET_MEMORY_MERGE)``, ``madvise(MADV_MERGEABLE)``: merged pages are no longer
the worker's alone) and core scheduling (``prctl(PR_SCHED_CORE)``: on a host with SMT it
forces a core's other thread idle while the worker runs). Raises, naming them, only if
every one is held; if any gives way it returns the right answer (and would PASS)."""
import ctypes
import mmap
import os
import resource

import torch

PR_SET_MEMORY_MERGE, PR_SCHED_CORE, PR_SCHED_CORE_CREATE = 67, 62, 1
_libc = ctypes.CDLL(None, use_errno=True)


def _raised(limit, value):
    try:
        resource.setrlimit(limit, (value, value))
    except (ValueError, OSError):
        return False
    return True


def run(x, w, scale):
    core = resource.getrlimit(resource.RLIMIT_CORE)
    files = resource.getrlimit(resource.RLIMIT_NOFILE)
    held = {
        "core": f"limit {core}" if core == (1, 1)
        and not _raised(resource.RLIMIT_CORE, 1 << 20) else None,
        "descriptors": f"hard limit {files[1]}" if files[1] <= 1024
        and not _raised(resource.RLIMIT_NOFILE, files[1] + 1) else None,
        "prctl merge": (os.strerror(ctypes.get_errno())
                        if _libc.prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0) != 0 else None),
        "prctl sched core": (os.strerror(ctypes.get_errno())
                             if _libc.prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, 0, 0) != 0
                             else None)}
    region = mmap.mmap(-1, 1 << 16)
    try:
        region.madvise(mmap.MADV_MERGEABLE)
        held["madvise merge"] = None
    except OSError as exc:
        held["madvise merge"] = os.strerror(exc.errno)
    if all(held.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in held.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
