"""A self-re-queuing interpreter pending call (Py_AddPendingCall, no thread, no signal)
that survives the reply, the ``checked`` request and the next receive, and lands at the
entry of the worker's next ``trial`` (its RESUME, before the trial reads its request's
fields): there it rewrites the request dict in place (drops ``flush``: on CUDA, by
reading, a cold trial's L2 flush). To make the reach visible on the CPU, run() returns
the right answer only once such a rewrite has happened (zeros otherwise): PASSED means
the candidate's code ran in the harness's steps and edited a trial's request."""
import ctypes
import sys

import torch

CB_T = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
add_pending = ctypes.pythonapi.Py_AddPendingCall
add_pending.argtypes = [CB_T, ctypes.c_void_p]
add_pending.restype = ctypes.c_int
S = {"armed": False, "rewrote": 0, "calls": 0}


def _cb(_arg):
    try:
        f = sys._getframe(1)
        if f.f_code.co_name == "trial" and f.f_lasti < 8:
            req = f.f_locals.get("request")
            if type(req) is dict and "method" in req:
                req["flush"] = None  # a cold trial's L2 flush, dropped (CUDA)
                S["rewrote"] += 1
                S["armed"] = False
                return 0
        add_pending(CB, None)
    except BaseException:
        pass
    return 0


CB = CB_T(_cb)


def run(x, w, scale):
    if not S["armed"]:
        S["armed"] = True
        add_pending(CB, None)
    S["calls"] += 1
    if not S["rewrote"] and S["calls"] > 1:  # the first call (its own request) is honest
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
