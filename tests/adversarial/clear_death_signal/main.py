"""Clears the worker's parent-death signal, or sets a harmless one, so that its first
process (and with it the whole worker) would outlive the process that started it, and
spin on after the audit was killed. Raises, naming the refusals, only if both are
refused; else it returns the right answer (and would PASS)."""
import ctypes
import os
import signal

import torch

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def run(x, w, scale):
    refused = []
    for name, number in (("clear", 0), ("SIGTERM", int(signal.SIGTERM))):
        if _libc.prctl(PR_SET_PDEATHSIG, number, 0, 0, 0) != 0:
            refused.append(f"{name}: {os.strerror(ctypes.get_errno())}")
    if len(refused) == 2:
        raise PermissionError(", ".join(refused))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
