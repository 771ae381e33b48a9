"""Arms each kind of timer that keeps firing while its owner is frozen: a timerfd, an
interval timer (``setitimer``) and ``alarm``. Raises, naming them, only if every one is
refused; if any is armed it returns the right answer (and would PASS)."""
import ctypes
import os

import torch

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_TIMERFD_CREATE, SYS_SETITIMER, SYS_ALARM = 283, 38, 37
CLOCK_MONOTONIC = 1


def _refused(number, *args):
    result = _libc.syscall(number, *args)
    return os.strerror(ctypes.get_errno()) if result < 0 else None


def run(x, w, scale):
    value = (ctypes.c_long * 4)(0, 0, 5, 0)  # struct itimerval: 5 s, no interval
    refused = {"timerfd_create": _refused(SYS_TIMERFD_CREATE, CLOCK_MONOTONIC, 0),
               "setitimer": _refused(SYS_SETITIMER, 0, value, None),
               "alarm": _refused(SYS_ALARM, 5)}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
