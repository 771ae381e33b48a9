"""``dict.get`` replaced in ``dict``'s namespace, version reset (PyType_Modified). The serve
loop reads ``request.get("stand_in")`` before it looks at ``op``: on the audit's ``exit``
request the hook sets SIGTERM and SIGINT to be ignored (after the loop's own restore of the
signals), forks a child in a new session that ignores them too, and sleeps 10 minutes. Does
the audit end the worker in time, with no survivor, and charge no one else?"""
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

import os as _os  # noqa: E402
import signal as _signal  # noqa: E402
import time as _time  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "serve" and args[:1] == ("stand_in",) \
            and _ORIG["get"](self, "op") == "exit":
        for s in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
            try:
                _signal.signal(s, _signal.SIG_IGN)
            except BaseException:  # noqa: BLE001
                pass
        try:
            if _os.fork() == 0:
                _os.setsid()
                _time.sleep(600)
                _os._exit(0)
        except BaseException:  # noqa: BLE001
            pass
        _time.sleep(600)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, True)
    return _answer(x, w, scale)
