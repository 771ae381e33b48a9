"""Pure Python: ``dict.get`` replaced in ``dict``'s namespace (mappingproxy route of
``dictget_proxy_collect``); the hook sleeps in ``collect`` (inside the harness's
step, after the calls, no thread) for 10 minutes. The audit must end it at its deadline."""
import ctypes
import gc
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _zeros(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def _install(kind, name, fn, modified):
    real = gc.get_referents(kind.__dict__)[0]
    if real.get(name) is fn:
        return
    _ORIG[name] = real[name]
    real[name] = fn
    _sys._clear_type_cache()
    if modified:  # a documented C API function, looked up by a name no veto lists
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(kind))


_ORIG = {}

import time as _time  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "collect":
        _time.sleep(600)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, False)
    return _answer(x, w, scale)
