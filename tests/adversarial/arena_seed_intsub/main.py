"""Round 114: an arena's ``seed`` and ``storage`` (read by the input check and the reveal)
set during the calls to ``int`` subclasses whose ``__eq__``/``__index__``/``__mod__`` fill
the outputs: ``_arena_reshaped`` would meet them after the calls in the state check.
Expected HELD: the arena's parts must be of their exact types (``_ARENA_PARTS``)."""
import sys

import torch
from lent_kit import answer as _answer

PENDING = []


def _fill():
    while PENDING:
        x, w, scale, outs = PENDING.pop()
        y, c = _answer(x, w, scale)
        outs[0].copy_(y)
        outs[1].copy_(c)


class _I(int):
    def __eq__(self, other):
        _fill()
        return int(self) == other

    def __mod__(self, other):
        _fill()
        return int(self) % other

    def __index__(self):
        _fill()
        return int(self)

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
    if worker is None or not vars(worker)["arenas"]:
        return _answer(x, w, scale)  # no arena yet (the first call): honestly
    if worker is not None:
        for arena in vars(worker)["arenas"].values():
            parts = vars(arena)
            if type(parts["seed"]) is int:
                parts["seed"] = _I(parts["seed"])
            parts["storage"] = _I(parts["storage"])
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
