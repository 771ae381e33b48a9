"""Round 113: with the worker's ``__dict__`` replaced by a dict subclass, the candidate's
``__iter__`` also runs inside the off-clock ``checked`` request's state check, after the
integrity check has filled the serve loop's ``tampered`` list: it empties that list in
place (a list, reached through the serve loop's frame) and the state check's own
``problems``. The calls rebind a guarded name (``statistics.median``, not on the message
path, so only the ``checked`` request's integrity check reports it) and compute honestly.
PASSED means a report was erased (a WEAKNESS: the route's own consequence, not a new
gain); RUNTIME_ERROR "statistics.median" means the report held."""
import statistics
import sys

import torch


def _erase():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "_state_problems":
            p = f.f_locals.get("problems")
            if type(p) is list:
                p.clear()
        if f.f_code.co_name == "serve":
            t = f.f_locals.get("tampered")
            if type(t) is list:
                t.clear()
        f = f.f_back


class D(dict):
    def __iter__(self):
        _erase()
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


def _median(data):
    return sorted(data)[len(data) // 2]


def run(x, w, scale):
    statistics.median = _median
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
