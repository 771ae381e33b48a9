"""Like worker_class_swap_sync, another lookup: the subclass defines a ``__dict__``
PROPERTY. ``trial`` reads ``state = vars(self)`` right after its put-back (to refuse a method
shadowed on the instance): ``vars`` looks ``__dict__`` up on ``type(self)``, where the
subclass's data descriptor wins. The getter assigns ``__class__`` back, writes the right
answers into the outputs the calls returned (zeros) and returns the real namespace.
WRONG unless the getter ran inside ``trial``."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}
_CLS = {}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _frame(name):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def _sub(base):
    if base not in _CLS:
        real = object.__getattribute__  # noqa: F841

        class Worker(base):
            @property
            def __dict__(self):
                object.__setattr__(self, "__class__", base)
                space = vars(self)  # the real one now
                try:
                    f = _sys._getframe(1)
                    loc = f.f_locals
                    if f.f_code.co_name == "trial" and loc.get("results"):
                        for set_id, outs in zip(loc["ids"], loc["results"]):
                            y, c = _answer(*space["sets"][set_id])
                            outs[0].copy_(y)
                            outs[1].copy_(c)
                        LOG["fired"] += 1
                except BaseException as exc:  # noqa: BLE001
                    LOG["err"] = repr(exc)
                return space
        Worker.__module__, Worker.__qualname__ = base.__module__, base.__qualname__
        _CLS[base] = Worker
    return _CLS[base]


def run(x, w, scale):
    worker = _frame("trial").f_locals["self"]
    worker.__class__ = _sub(type(worker))
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
