"""A profile function installed through the C API (ctypes: PyEval_SetProfile with a NULL
object), which sys.getprofile() does not show, set inside run: at the first _span call in
collect it swaps every entry of collect's list of lent slots for dummies, so the harness
copies the garbage run() returns into the dummies while the real slots keep the answers
run() wrote there itself (the output-in-a-slot skip the worker's check refuses)."""
import ctypes
import sys

import torch

K = {}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _py_hook(obj, frame, what, arg):
    try:
        if what == 0 and frame.f_code.co_name == "_span":
            f = frame.f_back
            while f is not None and f.f_code.co_name != "collect":
                f = f.f_back
            if f is not None:
                lent = f.f_locals.get("lent")
                if type(lent) is list and K.get("armed"):
                    for i, s in enumerate(lent):
                        lent[i] = tuple(torch.empty_like(t) for t in s)
                    K["armed"] = False
    except Exception:
        pass
    return 0


PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.py_object, ctypes.c_int,
                         ctypes.c_void_p)
HOOK = PROTO(_py_hook)
ctypes.pythonapi.PyEval_SetProfile.argtypes = [PROTO, ctypes.c_void_p]
ctypes.pythonapi.PyEval_SetProfile.restype = None


def run(x, w, scale):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    y, c = _answer(x, w, scale)
    if f is None:
        return y, c
    worker, req = f.f_locals["self"], f.f_locals["request"]
    if K.get("req") != id(req):
        K["req"], K["k"] = id(req), 0
    k = K["k"]
    K["k"] += 1
    if k >= len(worker.slots):
        return y, c
    worker.slots[k][0].copy_(y)
    worker.slots[k][1].copy_(c)
    K["armed"] = True
    ctypes.pythonapi.PyEval_SetProfile(HOOK, None)  # invisible to sys.getprofile()
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)
