"""The error path: every call after the first raises an exception whose class's METACLASS
defines ``__name__`` (a property: ``_one_line`` reads ``type(exc).__name__``, which looks
it up on the metaclass) and whose ``__str__`` runs too. Both run while the serve loop builds
the error reply; the hook writes the right answers into the lent slots and tries to turn
the reply into a success through the serve frame (its ``kept`` list, its ``reply``, not yet
bound). Expected RUNTIME_ERROR (the reply is built after the hook, from its own values)."""
import sys as _sys

import torch

N = [0]


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Meta(type):
    @property
    def __name__(cls):
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "serve":
            f = f.f_back
        if f is not None:
            loc = f.f_locals
            worker = loc["self"]
            request = loc.get("request") or {}
            for index, set_id in enumerate(request.get("ids") or []):
                y, c = _answer(*worker.sets[set_id])
                worker.slots[index][0].copy_(y)
                worker.slots[index][1].copy_(c)
            loc.clear()
        return "Fine"


class _Err(Exception, metaclass=_Meta):
    def __str__(self):
        return "ok"


def run(x, w, scale):
    N[0] += 1
    if N[0] == 1:
        return _answer(x, w, scale)
    raise _Err()
