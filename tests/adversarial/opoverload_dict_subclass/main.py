"""Round 113 (same family, expected HELD): the ``__dict__`` of torch's operator object
``aten::copy_`` (whose Python kernels the kernel check reads right after the calls)
replaced by a dict subclass whose ``get``/``items``/``__iter__`` would write the answers.
The check reads the namespace through the slot bound at import and tells it to be an
exact dict (``_python_kernels``), so this should be reported ("a kernel of aten::copy_")."""

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
    def __iter__(self):
        _hook()
        return dict.__iter__(self)

    def get(self, *a):
        _hook()
        return dict.get(self, *a)

    def items(self):
        _hook()
        return dict.items(self)


def run(x, w, scale):
    op = torch.ops.aten.copy_.default
    if type(op.__dict__) is dict:
        try:
            op.__dict__ = D(op.__dict__)
        except Exception:
            pass
    outs = (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
    PENDING.append((x, w, scale, outs))
    return outs
