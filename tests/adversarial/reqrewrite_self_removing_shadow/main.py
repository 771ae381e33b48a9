"""self-removing shadows of the worker's methods that ``trial`` looks up by
name on ``self`` (``_call``, ``_sync``, ``refresh``, ``_flush_l2``), set on the instance
when the trial request arrives (``io.BytesIO`` replaced) and removed by themselves as
they run, before ``collect``'s state check (which finds no shadow). On the CPU the
``_call`` shadow runs before the calls (a wrong answer unless it ran); on CUDA (by
reading) the ``_flush_l2`` shadow skips a cold trial's L2 flush and the ``_sync`` shadow
the device-wide synchronise after the calls."""
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
Worker = sys.modules["hf_eval.isolation.server"].Worker
LEFT = {"calls": 0}


def _call(method, set_id):
    LEFT["calls"] -= 1
    if LEFT["calls"] <= 0:
        vars(WORKER).pop("_call", None)
    STATE["ran"] += 1
    return Worker._call(WORKER, method, set_id)


def _flush_l2(size):  # CUDA: the cold trial's flush, skipped
    vars(WORKER).pop("_flush_l2", None)


def _sync():  # CUDA: no device-wide synchronise after the calls
    vars(WORKER).pop("_sync", None)
    if WORKER.device.type == "cuda":
        torch.cuda.current_stream().synchronize()


def _on_trial(obj):
    LEFT["calls"] = len(obj["ids"])
    vars(WORKER)["_call"] = _call
    if obj.get("flush"):
        vars(WORKER)["_flush_l2"] = _flush_l2


_install(_on_trial)


def run(x, w, scale):
    return _answer(x, w, scale, right=STATE["ran"] > 0)
