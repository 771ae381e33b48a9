"""Variant of localstofast_collect on the put-back itself: the trial frame's local
``_put`` (the put-back of every message-path name, bound in the trial's defaults) is
replaced with a no-op through PyFrame_LocalsToFast, and the module name
``server._restore_signals`` is... not needed: the candidate rebinds
``server._kernels_replaced`` (called by name after the put-back) to a function that
fills the outputs and then puts the real one back. With the put-back skipped the
rebinding is not undone before the trial's later steps. PASSED only if both worked."""
import ctypes
import sys

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

PENDING = []
_L2F = ctypes.pythonapi.PyFrame_LocalsToFast
_L2F.argtypes = [ctypes.py_object, ctypes.c_int]
server = sys.modules["hf_eval.isolation.server"]
_REAL = server._kernels_replaced


def _hook(ops):
    server._kernels_replaced = _REAL
    while PENDING:
        x, w, scale, y, c = PENDING.pop()
        a, b = _answer(x, w, scale)
        y.copy_(a)
        c.copy_(b)
    return _REAL(ops)


def run(x, w, scale):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        loc = f.f_locals
        loc["_put"] = lambda saved, replaced: []
        _L2F(f, 0)
    server._kernels_replaced = _hook
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    PENDING.append((x, w, scale, y, c))
    return y, c
