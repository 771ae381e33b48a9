"""Round 113: the worker's OUTPUT SLOTS (``worker.slots[k][j]``, the lent memfd views)
replaced by plain ``torch.Tensor`` objects carrying the Python dispatch key and a custom
device policy, on the very same memory (same address and size: ``Worker.lent``'s record
still matches). ``collect``'s state check reads each slot's device through the C getter
(``_device_of(t).type == "cpu"``), which asks the candidate's ``__torch_dispatch__``
(``prim.device``): its code runs inside ``_state_problems``, after every put-back and before
the copies, and writes the right answers into the zeros the calls returned (each slot's
copy_ is then passed through unchanged). PASSED would be an escape (goal 1)."""
import sys

import torch
from lent_kit import answer as _answer

_PY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
PENDING = []
BASE = {}
KEEP = []
MODE = "device"  # where the answer is written: "device" (the check) or "copy" (the copy)


class _Sub(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _in(name):
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == name:
            return True
        f = f.f_back
    return False


def _fill():
    while PENDING:
        x, w, scale, outs = PENDING.pop()
        y, c = _answer(x, w, scale)
        outs[0].copy_(y)
        outs[1].copy_(c)


def _keyed(base):
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_device=True)
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            if func is torch.ops.prim.device.default:
                if MODE == "device" and _in("collect"):
                    _fill()
                return torch.device("cpu")
            args = [BASE.get(id(a), a) for a in args]
            if MODE == "copy" and func is torch.ops.aten.copy_.default and _in("collect"):
                _fill()  # the outputs first, then the copy the harness asked for
            return func(*args, **(kwargs or {}))
    t.__dict__["__torch_dispatch__"] = td
    BASE[id(t)] = base
    KEEP.append(t)
    return t


def _worker():
    f = sys._getframe(2)
    while f is not None:
        me = f.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        f = f.f_back
    return None


def run(x, w, scale):
    worker = _worker()
    if worker is not None:
        for slot in worker.slots:
            for j, t in enumerate(slot):
                if id(t) not in BASE:
                    slot[j] = _keyed(t)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
