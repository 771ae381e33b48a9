"""Like worker_class_swap_sync, another lookup: the subclass defines
``__getattribute__``, which runs at the first attribute read of the worker after the calls
(``trial``'s ``self._sync`` after its put-back). It assigns ``__class__`` back, writes the
right answers into the outputs the calls returned (zeros) and reads on.
WRONG unless it ran inside ``trial``."""
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
            def __getattribute__(self, name):
                object.__setattr__(self, "__class__", base)
                try:
                    f = _sys._getframe(1)
                    loc = f.f_locals
                    if f.f_code.co_name == "trial" and loc.get("results"):
                        for set_id, outs in zip(loc["ids"], loc["results"]):
                            y, c = _answer(*object.__getattribute__(self, "sets")[set_id])
                            outs[0].copy_(y)
                            outs[1].copy_(c)
                        LOG["fired"] += 1
                except BaseException as exc:  # noqa: BLE001
                    LOG["err"] = repr(exc)
                return object.__getattribute__(self, name)
        Worker.__module__, Worker.__qualname__ = base.__module__, base.__qualname__
        _CLS[base] = Worker
    return _CLS[base]


def run(x, w, scale):
    worker = _frame("trial").f_locals["self"]
    object.__setattr__(worker, "__class__", _sub(type(worker)))
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
