"""Outlive the worker through the kernel's core-dump helper: raise RLIMIT_CORE, make the
process dumpable again (it changed uid), then abort with a large heap. Where
core_pattern pipes to a helper (systemd-coredump, apport), the kernel starts it as root
on the host: a process outside every wall and cgroup that outlives the worker and writes
the heap to the host's disk. Reports what was refused (RUNTIME_ERROR either way)."""
import ctypes
import os
import resource

libc = ctypes.CDLL(None, use_errno=True)


def run(x, w, scale):
    notes = []
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        notes.append("core limit raised")
    except (ValueError, OSError) as exc:
        notes.append(f"setrlimit: {exc}")
    notes.append(f"limit now {resource.getrlimit(resource.RLIMIT_CORE)}")
    r = libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
    notes.append(f"dumpable: {r} errno {ctypes.get_errno()} now {libc.prctl(3, 0, 0, 0, 0)}")
    if resource.getrlimit(resource.RLIMIT_CORE)[0] > 1 << 20:
        blob = bytearray(200 << 20)  # noqa: F841 - a heap worth dumping
        os.abort()
    raise RuntimeError("; ".join(notes))
