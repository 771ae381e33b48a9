"""Round 113: a masked arena's private copy (``vars(arena)["private"]``, the tensor the
state check compares with the reveal's numpy words) replaced by a plain ``torch.Tensor``
on the same memory that carries the Python dispatch key and a custom sizes policy. The
arena's namespace is told to be an exact dict and the part an exact ``torch.Tensor``
(``_arena_reshaped``), but its size is read through ``TensorBase.nbytes``, which asks the
tensor's ``__torch_dispatch__`` (``aten.numel``): candidate code runs inside
``_state_problems`` in ``collect`` (and in the reveal's ``_arena_parts``). In a timed trial
(where an arena exists) the calls return zeros and that code writes the right answers;
untimed calls (no arena yet) compute honestly. PASSED would be an escape (goal 1)."""
import sys

import torch
from lent_kit import answer as _answer

_PY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
PENDING = []
BASE = {}
KEEP = []


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
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_sizes_strides_policy="sizes")
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            if func in (torch.ops.aten.numel.default, torch.ops.aten.sym_numel.default):
                if _in("collect"):
                    _fill()
                return base.numel()
            if func is torch.ops.aten.sym_size.default:
                return list(base.shape)
            if func is torch.ops.aten.sym_stride.default:
                return list(base.stride())
            if func is torch.ops.aten.sym_storage_offset.default:
                return base.storage_offset()
            args = [BASE.get(id(a), a) for a in args]
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
    armed = False
    if worker is not None:
        for arena in worker.arenas.values():
            parts = vars(arena)
            if id(parts["private"]) not in BASE:
                parts["private"] = _keyed(parts["private"])
            armed = True
    if not armed:
        return _answer(x, w, scale)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
