"""A forged claim through a frame write by name: the trial frame's local ``clock`` (the
CPU clock read right after the calls, bound before them) is replaced, through
PyFrame_LocalsToFast, by a function returning t0 + 1 us. The calls do the full work
(plus 1 ms of spin); the claim is 0.001 ms. The guard should count the host-implied time
(round 4's bound): does the counted time fall below the honest one beyond the slack?"""
import ctypes
import sys
import time

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

_L2F = ctypes.pythonapi.PyFrame_LocalsToFast
_L2F.argtypes = [ctypes.py_object, ctypes.c_int]


def run(x, w, scale):
    end = time.perf_counter() + 0.001
    while time.perf_counter() < end:
        pass
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        loc = f.f_locals
        t0 = loc.get("t0")
        if t0 is not None:
            loc["clock"] = lambda t0=t0: t0 + 1e-6
            _L2F(f, 0)
    return _answer(x, w, scale)
