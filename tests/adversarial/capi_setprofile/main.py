"""Round 107 probe: a profile function set through the C API (``PyEval_SetProfile`` by
ctypes, a ctypes callback as ``Py_tracefunc``), not ``sys.setprofile``. Expected: the
C API raises the same ``sys.setprofile`` audit event, which the worker's hook vetoes."""
import ctypes

import torch

_FUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                         ctypes.c_void_p)
_calls = [0]


def _trace(obj, frame, what, arg):
    _calls[0] += 1
    return 0


_HOOK = _FUNC(_trace)
ctypes.pythonapi.PyEval_SetProfile.argtypes = [_FUNC, ctypes.c_void_p]
ctypes.pythonapi.PyEval_SetProfile(_HOOK, None)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
