"""the audit's ``exit`` request rewritten on its way in (``io.BytesIO``
replaced) into ``null``: the worker keeps serving, and the audit waits for it to end
before killing it. How long does one such candidate hold the audit (charged to no
record)?"""
import _io
import io
import pickle
import sys

import torch

_BytesIO = _io.BytesIO


def _find_worker():
    server = sys.modules["hf_eval.isolation.server"]
    f = sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "load"
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


WORKER = _find_worker()
STATE = {"ran": 0}


def _install(on_trial):
    """``io.BytesIO`` replaced: every request the worker receives passes through
    ``on_trial`` (a trial's dict) before the harness reads it."""

    def BytesIO(data=b"", *rest):
        try:
            obj = pickle.loads(bytes(data))
        except Exception:  # noqa: BLE001
            return _BytesIO(data, *rest)
        if type(obj) is dict and obj.get("op") == "trial":
            on_trial(obj)
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        return _BytesIO(data, *rest)

    io.BytesIO = BytesIO


def _answer(x, w, scale, right=True):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if not right:
        y = -y
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def BytesIO(data=b"", *rest):
    try:
        obj = pickle.loads(bytes(data))
    except Exception:  # noqa: BLE001
        return _BytesIO(data, *rest)
    if type(obj) is dict and obj.get("op") == "exit":
        obj["op"] = "null"
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _BytesIO(data, *rest)


io.BytesIO = BytesIO


def run(x, w, scale):
    return _answer(x, w, scale)
