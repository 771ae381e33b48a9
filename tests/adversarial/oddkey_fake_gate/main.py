"""A launch gate of the candidate's on a CPU worker. ``_state_problems`` checks
``Worker.gate`` on every device: an exact ``LaunchGate`` (made with ``__new__``, all eight
attributes of the right types, so ``_gate_reshaped`` finds nothing) whose instance dict
holds a key of the candidate's class hashed like ``"value"`` ahead of it. ``_gate_reshaped``
reads ``parts.get("value")`` BEFORE it walks the keys, so the key's ``__eq__`` runs inside
``collect``'s state check: after the CPU clock (``elapsed``) was read, before the copies
into the slots. It deletes itself (the walk then sees only str keys), writes the right
answers into the tensors the calls returned, and re-arms for the next trial in the next
call. The calls return zeros. WRONG unless the hook ran in ``collect``."""
import _thread
import ctypes
import sys as _sys

import torch

from hf_eval.isolation.server import LaunchGate

LOG = {"fired": 0, "err": None}
_LIBC = ctypes.CDLL(None)


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Key:
    def __hash__(self):
        return hash("value")

    def __eq__(self, other):
        if _sys._getframe(1).f_code.co_name != "_gate_reshaped":
            return False
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "collect":
                f = f.f_back
            vars(_GATE).pop(self, None)
            if f is not None:
                t = f.f_back  # trial
                loc = t.f_locals
                worker = loc["self"]
                for set_id, outs in zip(loc["ids"], loc["results"]):
                    y, c = _answer(*vars(worker)["sets"][set_id])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


_GATE = LaunchGate.__new__(LaunchGate)
vars(_GATE).update({"_wait": _LIBC.getpid, "word": torch.zeros(1, dtype=torch.int32),
                    "address": 0, "opened": 0, "deadline": 0.0,
                    "_lock": _thread.allocate_lock(), "_wake": _thread.allocate_lock()})


def _arm():
    d = vars(_GATE)
    d.pop("value", None)
    d[_Key()] = None
    d["value"] = 0


def _frame(name):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def run(x, w, scale):
    worker = _frame("trial").f_locals["self"]
    vars(worker)["gate"] = _GATE
    _arm()
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
