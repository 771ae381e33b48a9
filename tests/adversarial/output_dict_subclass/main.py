"""Round 113 (same family, expected HELD): the OUTPUT tensors' own instance ``__dict__``
replaced by a dict subclass (and given a ``__torch_function__``/``__torch_dispatch__``
entry) whose lookups would write the answers. The harness reads outputs only through the
C types' own accessors on exact ``torch.Tensor`` objects without the Python key, which
never consult an instance dict: the zeros should fail (INCORRECT_NUMERICAL)."""
import torch
from lent_kit import answer as _answer

PENDING = []


def _hook():
    while PENDING:
        x, w, scale, outs = PENDING.pop()
        y, c = _answer(x, w, scale)
        outs[0].copy_(y)
        outs[1].copy_(c)


class D(dict):
    def __getitem__(self, k):
        _hook()
        return dict.__getitem__(self, k)

    def get(self, *a):
        _hook()
        return dict.get(self, *a)

    def __iter__(self):
        _hook()
        return dict.__iter__(self)


def _tf(*a, **k):
    _hook()
    return NotImplemented


def run(x, w, scale):
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    for t in outs:
        d = D()
        dict.__setitem__(d, "__torch_function__", _tf)
        dict.__setitem__(d, "__torch_dispatch__", _tf)
        t.__dict__ = d
    PENDING.append((x, w, scale, outs))
    return outs
