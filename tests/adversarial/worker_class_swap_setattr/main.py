"""Like worker_class_swap_sync, another lookup: the subclass defines ``__setattr__``.
``trial`` stores ``self.produced = list(zip(ids, results))`` after every check of its own
and right before ``collect``: ``type(self).__setattr__`` runs there. It assigns
``__class__`` back, writes the right answers into the outputs about to be stored (the calls
returned zeros) and stores them. WRONG unless the hook ran inside ``trial``."""
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
        class Worker(base):
            def __setattr__(self, name, value):
                object.__setattr__(self, "__class__", base)
                try:
                    if name == "produced" and value:
                        for set_id, outs in value:
                            y, c = _answer(*vars(self)["sets"][set_id])
                            outs[0].copy_(y)
                            outs[1].copy_(c)
                        LOG["fired"] += 1
                except BaseException as exc:  # noqa: BLE001
                    LOG["err"] = repr(exc)
                object.__setattr__(self, name, value)
        Worker.__module__, Worker.__qualname__ = base.__module__, base.__qualname__
        _CLS[base] = Worker
    return _CLS[base]


def run(x, w, scale):
    worker = _frame("trial").f_locals["self"]
    object.__setattr__(worker, "__class__", _sub(type(worker)))
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
