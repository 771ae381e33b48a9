"""A C-level SIGIO handler (libc signal() through ctypes; signal.getsignal still
says SIG_DFL, so the worker's _restore_signals never replaces it) armed on the worker's
channel socket (F_SETOWN + O_ASYNC): it runs candidate Python code inside every receive,
with the serve loop's frame in reach. Here it only counts and records which harness
frames it interrupted; run() reports that by raising (so the record shows it)."""
import ctypes
import fcntl
import os
import socket
import sys

import torch

libc = ctypes.CDLL(None, use_errno=True)
H_T = ctypes.CFUNCTYPE(None, ctypes.c_int)
S = {"n": 0, "where": set()}


def _on_io(signum):
    S["n"] += 1
    f = sys._getframe(1)
    names = []
    while f is not None and len(names) < 6:
        names.append(f.f_code.co_name)
        f = f.f_back
    S["where"].add("/".join(names))


H = H_T(_on_io)
libc.signal.argtypes = [ctypes.c_int, H_T]
libc.signal.restype = ctypes.c_void_p
libc.signal(29, H)  # SIGIO
for fd in range(3, 64):
    try:
        s = socket.socket(fileno=os.dup(fd))
        if s.family == socket.AF_UNIX:
            fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
        s.detach()
    except OSError:
        pass
CALLS = [0]


def run(x, w, scale):
    CALLS[0] += 1
    if CALLS[0] >= 2:
        raise RuntimeError(f"C-level SIGIO handler ran {S['n']} times unreported; "
                           f"frames: {sorted(S['where'])[:3]}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
