"""Round 113: a TOCTOU between how the checks read the worker's namespace and how Python
looks attributes up. The worker's ``__dict__`` is replaced by a dict subclass whose
iteration (``__iter__``, and so ``list(state)``, ``set(vars(owner))``) hides one key:
``_inputs_of``, an instance attribute that shadows the method. The trial's step after the
calls (``n in _WORKER_NAMES`` over ``list(state)``) and the state check
(``set(vars(owner)) & names``) never see it, but ``self._inputs_of(...)`` in ``_checked``
is a C-level lookup of the real dict, which finds the candidate's function first: it
writes the right answers into the zeros the calls returned and returns what the method
returns. PASSED would be an escape (goal 1)."""
import sys

import torch
from lent_kit import answer as _answer

PENDING = []
HIDDEN = "_inputs_of"


class D(dict):
    def __iter__(self):
        return iter([k for k in dict.__iter__(self) if k != HIDDEN])

    def __len__(self):
        return dict.__len__(self) - (HIDDEN in self.keys())


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
    real = type(WORKER)._inputs_of

    def shadow(set_id, sources=True):
        while PENDING:
            x, w, scale, outs = PENDING.pop()
            y, c = _answer(x, w, scale)
            outs[0].copy_(y)
            outs[1].copy_(c)
        return real(WORKER, set_id, sources)

    d = D(WORKER.__dict__)
    dict.__setitem__(d, HIDDEN, shadow)
    WORKER.__dict__ = d


def run(x, w, scale):
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
