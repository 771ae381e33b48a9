"""Makes the worker's outer process its tracer (``PTRACE_TRACEME``, at import): a stop
of its own would then be reported to that process as if the candidate had ended, so the
outer one would exit and leave the candidate spinning outside the spawner's sight, to
outlive a killed audit. Raises, naming the refusal, if it was refused; else it returns
the right answer (and would PASS)."""
import ctypes
import os

import torch

PTRACE_TRACEME = 0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
REFUSED = None
if _libc.ptrace(ctypes.c_long(PTRACE_TRACEME), ctypes.c_long(0), ctypes.c_void_p(0),
                ctypes.c_void_p(0)) != 0:
    REFUSED = os.strerror(ctypes.get_errno())


def run(x, w, scale):
    if REFUSED is not None:
        raise PermissionError(f"ptrace: {REFUSED}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
