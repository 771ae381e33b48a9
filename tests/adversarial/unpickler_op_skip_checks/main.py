"""Route of unpickler_load_chain. The hook gives EVERY request an ``op`` of a ``str``
subclass that answers ``op == "trial"`` with True: the serve loop still picks the right
handler (``name == op`` is compared with the real name), but then takes its trial branch
("a trial's reply leaves at once"), skipping every integrity and state check. The candidate
leaves a guarded name replaced for good (``time.perf_counter``, in ``GUARDED``; the
worker's own path uses its bound copy) and calls go on: honest work, PASSED, nothing
reported. Without the hook the next non-trial message reports ``time.perf_counter``."""
import pickle
import sys as _sys
import time as _time

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

_PC = _time.perf_counter


def _pc():
    return _PC()


class _Op(str):
    def __eq__(self, other):
        if other == "trial" and _sys._getframe(1).f_code.co_name == "serve":
            return True
        return str.__eq__(str(self), other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def rewrite(request):
    if type(request.get("op")) is str:
        request["op"] = _Op(request["op"])
        LOG["fired"] += 1


def run(x, w, scale):
    if _arm():
        _time.perf_counter = _pc  # left replaced: every later check would report it
    return _answer(x, w, scale)
