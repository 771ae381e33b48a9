"""Opens a software perf event on itself (events are copied into every child a process
forks, and neither they nor their ring buffers are charged to any cgroup) and asks for
SO_REUSEPORT on an IP socket (a reuseport group, also uncharged). Raises, naming them,
only if both are refused; if either is taken it returns the right answer (and would
PASS)."""
import ctypes
import os
import socket

import torch

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_PERF_EVENT_OPEN = 298  # x86_64
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK = 1, 0


def _perf_refused():
    attr = (ctypes.c_uint32 * 32)()  # struct perf_event_attr, 128 bytes, zeroed
    attr[0], attr[1] = PERF_TYPE_SOFTWARE, 128  # type, size
    fd = _libc.syscall(SYS_PERF_EVENT_OPEN, attr, 0, -1, -1, 0)  # this process, any cpu
    if fd < 0:
        return os.strerror(ctypes.get_errno())
    os.close(fd)
    return None


def _reuseport_refused():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        except OSError as exc:
            return exc.strerror
    return None


def run(x, w, scale):
    refused = {"perf_event_open": _perf_refused(), "SO_REUSEPORT": _reuseport_refused()}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
