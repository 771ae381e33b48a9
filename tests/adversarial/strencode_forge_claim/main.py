"""Honest work. ``str.encode`` replaced in ``str``'s namespace (as
``strencode_send_fill``): in ``send_reply`` the hook rewrites the trial reply's JSON,
the claim (``event_ms``) divided by 100, before the bytes are made. The guard should
count it at its host time (a bounded gain at most)."""
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

import json as _json  # noqa: E402


def _encode(self, *args, **kw):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "send_reply" and '"event_ms"' in self:
            d = _json.loads(self)
            d["event_ms"] = d["event_ms"] / 100
            self = _json.dumps(d)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["encode"](self, *args, **kw)


def run(x, w, scale):
    _install(str, "encode", _encode, True)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
