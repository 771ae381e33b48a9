"""Round 114: ``Worker.lent`` (the record of the lent slots' addresses) rebuilt with ``int``
subclasses whose ``__eq__`` fills the outputs: the state check compares the slots'
addresses with it (``tuple(...) != record``), and an ``int`` subclass there would answer
with its own code after the calls. Expected HELD: the check reads its items' exact types
first, and the trial compares the record by identity with the one the serve loop took."""
import sys

import torch
from lent_kit import answer as _answer

PENDING = []
DONE = []


class _I(int):
    def __eq__(self, other):
        while PENDING:
            x, w, scale, outs = PENDING.pop()
            y, c = _answer(x, w, scale)
            outs[0].copy_(y)
            outs[1].copy_(c)
        return int(self) == other

    __hash__ = int.__hash__


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
    if worker is not None and not DONE:
        vars(worker)["lent"] = tuple((_I(a), _I(b)) for a, b in vars(worker)["lent"])
        DONE.append(1)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
