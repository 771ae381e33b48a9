"""Round 114: ``Worker.graph`` on a CPU worker set to a tuple a capture would make: a
``torch.cuda.CUDAGraph`` made without its ``__init__`` (``object.__new__``: the dummy CPU
class refuses construction only there), a list of set ids, and a list of keyed tensors
(torch's Python dispatch key, class set back to ``torch.Tensor``). ``_graph_plain`` checks
only their types, not their keys; if any step of a CPU trial or of the state check read
one of those tensors, the candidate's dispatch (which fills the outputs) would run.
Expected HELD: nothing reads a graph's tensors on the CPU (the eager method)."""
import sys

import torch
from lent_kit import answer as _answer

PENDING, KEEP = [], []
_PY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)


class _Sub(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def _keyed():
    base = torch.zeros(4)
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_device=True)
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            while PENDING:
                x, w, scale, outs = PENDING.pop()
                y, c = _answer(x, w, scale)
                outs[0].copy_(y)
                outs[1].copy_(c)
            if func is torch.ops.prim.device.default:
                return torch.device("cpu")
            args = [base if a is t else a for a in args]
            return func(*args, **(kwargs or {}))
    t.__dict__["__torch_dispatch__"] = td
    KEEP.append((t, base))
    return t


def _worker():
    f = sys._getframe(1)
    while f is not None:
        me = f.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        f = f.f_back
    return None


def run(x, w, scale):
    worker = _worker()
    if worker is not None and not KEEP:
        vars(worker)["graph"] = (object.__new__(torch.cuda.CUDAGraph), ["g"], [_keyed()])
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
