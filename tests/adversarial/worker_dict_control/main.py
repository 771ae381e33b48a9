"""Round 113: the worker's instance ``__dict__`` REPLACED (``worker.__dict__ = D(...)``) by
a dict subclass of the candidate's. Assigning ``__dict__`` raises no audit event (the
worker's hook refuses ``__class__`` only), and no check tells the worker's namespace to
be an exact dict (the arenas' and the gate's are). Every ``vars(self)`` of the harness
then hands back the subclass, whose ``__iter__`` is the candidate's code: the trial's
own step right after the calls and the put-back (``list(state)``, looking for attributes
that shadow methods) runs it, before ``collect``. There it writes the right answers into
the zeros the calls returned. CONTROL: the same dict subclass, filling nothing: must
fail (INCORRECT_NUMERICAL)."""
import sys

import torch
from lent_kit import answer as _answer

PENDING = []
LOG = {"fills": 0}


class D(dict):
    def __iter__(self):
        sys._getframe(1)
        if False:  # control: never fills
            while PENDING:
                x, w, scale, outs = PENDING.pop()
                y, c = _answer(x, w, scale)
                outs[0].copy_(y)
                outs[1].copy_(c)
                LOG["fills"] += 1
        return dict.__iter__(self)


def _find_worker():
    f = sys._getframe(1)
    while f is not None:
        me = f.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        f = f.f_back
    return None


WORKER = _find_worker()
if WORKER is not None:
    WORKER.__dict__ = D(WORKER.__dict__)


def run(x, w, scale):
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
