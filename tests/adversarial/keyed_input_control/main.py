"""Round 113: an INPUT of the worker's own set lists replaced by a plain ``torch.Tensor``
that carries torch's Python dispatch key and a custom device policy
(``_make_subclass(..., dispatch_device=True)``, then ``__class__ = torch.Tensor``), on
the very storage of the real input. Round 103 refuses such tensors as outputs
(``_not_plain``), but the inputs are only told to be of the exact class and to span what
was registered (``_inputs_of`` -> ``_tensor_spans`` -> ``_span``). ``_span`` reads the
tensor's device through the C getter, which asks the tensor's ``__torch_dispatch__``
(``prim.device``): candidate code runs inside ``collect``'s ``_checked``, after every
put-back and check and before the copies into the slots. There it writes the right
answers into the zeros the calls returned, and answers "cpu" so the spans match.
CONTROL: the same replacement and hook, but the hook fills nothing: must fail
(INCORRECT_NUMERICAL)."""
import sys

import torch
from lent_kit import answer as _answer

_PY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
PENDING = []  # (x, w, scale, outputs) of the calls since the last fill
BASE = {}  # id(keyed) -> the real tensor it wraps
KEYED = set()
LOG = {"fills": 0}


class _Sub(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _fill():
    while PENDING:
        x, w, scale, outs = PENDING.pop()
        y, c = _answer(x, w, scale)
        outs[0].copy_(y)
        outs[1].copy_(c)
        LOG["fills"] += 1


def _keyed(base):
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_device=True)
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            if func is torch.ops.prim.device.default:
                f = sys._getframe(1)
                while f is not None and f.f_code.co_name != "collect":
                    f = f.f_back
                if f is not None:
                    pass  # control: no fill
                return torch.device("cpu")
            unwrapped = [BASE.get(id(a), a) for a in args]
            return func(*unwrapped, **(kwargs or {}))
    t.__dict__["__torch_dispatch__"] = td
    BASE[id(t)] = base
    KEYED.add(t)
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
    x, w = BASE.get(id(x), x), BASE.get(id(w), w)
    worker = _worker()
    if worker is not None:
        for _set_id, inputs in worker.sets.items():
            for i, v in enumerate(inputs):
                if type(v) is torch.Tensor and id(v) not in BASE:
                    inputs[i] = _keyed(v)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
