"""The worker cannot set signals 32 and 33 back. A handler on 32 raised by the channel's arrivals
(F_SETSIG) runs inside the receive, after the serve loop's put-back: it rebinds
server._plain_keys (the trial's first call) to a self-restoring function, so candidate code
runs inside the trial before the calls, unreported; there it does the 20 ms 'kernel' for
every set before t0, so the call returns precomputed answers."""
import ctypes
import fcntl
import os
import socket
import sys
import threading
import time

import torch

import hf_eval.isolation.server as srv


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class SA(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("flags", ctypes.c_ulong),
                ("restorer", ctypes.c_void_p), ("mask", ctypes.c_ulong)]

H_T = ctypes.CFUNCTYPE(None, ctypes.c_int)


def install(sig):
    old = SA()
    libc.syscall(13, 33, None, ctypes.byref(old), 8)
    new = SA(ctypes.cast(H, ctypes.c_void_p).value, 0x04000000 | 0x10000000, old.restorer, 0)
    assert libc.syscall(13, sig, ctypes.byref(new), None, 8) == 0


SIG = 32
REAL = srv._plain_keys
D = {"ready": {}, "n": 0}


def fake(worker):
    srv._plain_keys = REAL
    REAL(worker)
    D["n"] += 1
    return None


def _on_sig(signum):
    f = sys._getframe(1)
    names = []
    while f is not None:
        names.append(f.f_code.co_name)
        f = f.f_back
    if "_receive" in names:
        g = sys._getframe(1)
        while g is not None and "sock" not in g.f_locals:
            g = g.f_back
        try:
            buf = ctypes.create_string_buffer(65536)
            n = libc.recv(g.f_locals["sock"].fileno(), buf, 65536, 0x02 | 0x40)  # PEEK|DONTWAIT
            if n > 0 and b"trial" in buf.raw[:n]:
                srv._plain_keys = fake
        except Exception:
            pass


H = H_T(_on_sig)
install(SIG)


class OwnerEx(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("pid", ctypes.c_int)]


tid = threading.get_native_id()
for fd in range(3, 64):
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        continue
    try:
        if s.family == socket.AF_UNIX:
            libc.fcntl(fd, 15, ctypes.byref(OwnerEx(0, tid)))
            fcntl.fcntl(fd, 10, SIG)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    finally:
        s.close()
N = [0]


def run(x, w, scale):
    N[0] += 1
    if D["n"] >= 1 and N[0] >= 3:
        raise RuntimeError(f"fake _plain_keys ran {D['n']} times inside trials, unreported")
    time.sleep(0.02)
    return honest(x, w, scale)
