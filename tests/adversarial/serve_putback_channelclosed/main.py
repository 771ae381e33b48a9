"""Pure Python: ``dict.get`` replaced in ``dict``'s namespace. In the serve loop's
put-back after a trial's handler (outside every ``try``), the hook raises the channel's own
``ChannelClosed``; the loop has no handler there, so the worker's serve ends. What does the
audit blame?"""
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

from hf_eval.isolation.channel import ChannelClosed  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "_put_back" and f.f_back is not None \
            and f.f_back.f_code.co_name == "serve" and f.f_back.f_locals.get("op") == "trial":
        raise ChannelClosed("the audit closed the channel (harness)")
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, False)
    return _answer(x, w, scale)
