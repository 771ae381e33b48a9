"""Retry of round 92's close (the worker's class swapped) with one variation: the CHANNEL
object's class (``worker.channel.__class__``) swapped for a subclass whose ``__getattribute__``
fills... here it only tries the swap; returns the right answer only if the swap was
allowed, else zeros. WRONG/refused expected (audit hook)."""
import sys as _sys

import torch

LOG = {"swap": None}


def run(x, w, scale):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    ok = False
    if f is not None:
        ch = vars(f.f_locals["self"])["channel"]
        try:
            klass = type(ch)
            ch.__class__ = type("Sub", (klass,), {})
            ok = True
        except BaseException as exc:  # noqa: BLE001
            LOG["swap"] = repr(exc)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if ok:
        return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
