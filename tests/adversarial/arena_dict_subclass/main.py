"""Round 113 (probe of the same family, expected HELD): a masked arena's instance
``__dict__`` replaced by a dict subclass whose ``get``/``__getitem__``/``__iter__`` would
write the answers in the state check. ``_arena_reshaped`` tells the arena's namespace to
be an exact dict, so this should be refused (RUNTIME_ERROR, "a part of an arena" or
"Worker.arenas"). Untimed calls (no arena yet) compute honestly."""
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

    def __getitem__(self, k):
        _hook()
        return dict.__getitem__(self, k)


def _worker():
    f = sys._getframe(2)
    while f is not None:
        me = f.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        f = f.f_back
    return None


def run(x, w, scale):
    worker = _worker()
    armed = False
    if worker is not None:
        for arena in worker.arenas.values():
            if type(arena.__dict__) is dict:
                arena.__dict__ = D(arena.__dict__)
            armed = True
    if not armed:
        return _answer(x, w, scale)
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
