"""Round 114 (variant: KeyboardInterrupt): the marker's dispatch raises KeyboardInterrupt
inside collect (a BaseException the serve loop's `except Exception` does not catch): the
worker ends; the verdict must be the candidate's RUNTIME_ERROR, not the harness's. A
keyed tensor (torch's Python dispatch key, custom device policy, class set back to
``torch.Tensor``) put in ``Worker.marker`` (CUPTI's end marker, which a CPU worker never
uses), a place round 113's close does not read with ``_not_plain``. ``collect``'s state
check (``_state_problems``) reads the marker whenever it is not None: type, dtype, then
``_shape_of(marker)`` and ``_device_of(marker)``, the latter dispatched to the
candidate's ``__torch_dispatch__`` (``prim.device``). There, after every put-back and
before the copies, it writes the right answers into the zeros the calls returned. PASSED
would be an escape (goal 1)."""
import sys

import torch
from lent_kit import answer as _answer

_PY = torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
PENDING = []
KEEP = []


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


def _keyed():
    base = torch.zeros(1, dtype=torch.uint8)
    t = torch.Tensor._make_subclass(_Sub, base, dispatch_device=True)
    t.__class__ = torch.Tensor

    def td(func, types, args=(), kwargs=None):
        with torch._C._ExcludeDispatchKeyGuard(_PY):
            if func is torch.ops.prim.device.default:
                raise KeyboardInterrupt("DATA_ERROR harness: the audit failed")
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
        worker.marker = _keyed()
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
