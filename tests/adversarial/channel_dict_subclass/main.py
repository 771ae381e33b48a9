"""Round 113: the worker's CHANNEL object's instance ``__dict__`` replaced by a dict subclass
of the candidate's (``worker.channel.__dict__ = D(...)``: no audit event, no exact-type
check). ``_state_problems`` walks it (``_odd_keys(vars(owner))``, ``set(vars(owner))``) and
reads ``vars(worker.channel).get("sock")``: the subclass's ``__iter__`` and ``get`` are the
candidate's code, run inside ``collect`` after every put-back, before the copies. There
it writes the right answers into the zeros the calls returned. PASSED would be an escape
(goal 1)."""
import sys

import torch
from lent_kit import answer as _answer

PENDING = []


def _hook():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "collect":
        f = f.f_back
    if f is None:
        return
    while PENDING:
        x, w, scale, outs = PENDING.pop()
        y, c = _answer(x, w, scale)
        outs[0].copy_(y)
        outs[1].copy_(c)


class D(dict):
    def __iter__(self):
        _hook()
        return dict.__iter__(self)

    def get(self, *a):
        _hook()
        return dict.get(self, *a)


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
    WORKER.channel.__dict__ = D(WORKER.channel.__dict__)


def run(x, w, scale):
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
