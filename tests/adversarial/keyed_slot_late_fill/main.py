"""Round 113: the worker's OUTPUT SLOTS (``worker.slots[k][j]``, the lent memfd views)
replaced by plain ``torch.Tensor`` objects carrying the Python dispatch key and a custom
device policy, on the very same memory (same address and size: ``Worker.lent``'s record
still matches). ``collect``'s state check reads each slot's device through the C getter
(``_device_of(t).type == "cpu"``), which asks the candidate's ``__torch_dispatch__``
(``prim.device``). Probe of moving the work OFF the clock by the same route: the hook
writes the right answers straight into the lent SLOTS only in the off-clock ``checked``
request (after the reply, after the audit's sealed sample). Expected HELD: the seal sees
the outputs change after the reply (RUNTIME_ERROR) - a fake speed-up (goal 2) if not."""
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


WORKER = []


def _fill():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    if f is None or f.f_locals.get("op") != "checked" or not WORKER:
        return
    for index, (x, w, scale, _outs) in enumerate(PENDING):
        y, c = _answer(x, w, scale)
        base0 = BASE.get(id(WORKER[0].slots[index][0]), WORKER[0].slots[index][0])
        base1 = BASE.get(id(WORKER[0].slots[index][1]), WORKER[0].slots[index][1])
        base0.copy_(y)
        base1.copy_(c)
    PENDING.clear()


def _keyed(base):
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_device=True)
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            if func is torch.ops.prim.device.default:
                if MODE == "device" and _in("serve"):
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
    PENDING.clear()  # only this trial's calls
    if worker is not None:
        WORKER[:] = [worker]
        for slot in worker.slots:
            for j, t in enumerate(slot):
                if id(t) not in BASE:
                    slot[j] = _keyed(t)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
