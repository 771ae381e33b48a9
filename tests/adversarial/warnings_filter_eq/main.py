"""No name rebound, no class attribute set, no thread, no signal, no ctypes. At import the
candidate APPENDS an entry to the list ``warnings.filters`` (the put-back and the snapshot
hold the name ``warnings.filters`` to the same list object, never its content): a 5-tuple
whose action is a ``str`` subclass. Every buffer the worker maps on a request's way in
(``memory._frombuffer``: ``with catch_warnings(): simplefilter("ignore")``) runs
``warnings._add_filter``, whose ``filters.remove(item)`` compares every entry with the new
one: the entry's ``__eq__`` runs inside the receive of every request that carries tensors
(``register``, ``slots``), unreported. The calls return the right answer only once that
code has run (zeros otherwise). A defence bypass: candidate code inside the harness's
receive, persistent and never reported."""
import warnings

import torch

LOG = {"fired": 0, "where": set()}


class _Action(str):
    def __eq__(self, other):
        import sys
        f = sys._getframe(1)
        names = []
        while f is not None and len(names) < 12:
            names.append(f.f_code.co_name)
            f = f.f_back
        if "_receive" in names:
            LOG["fired"] += 1
            LOG["where"].add(tuple(names[:6]))
        return False  # never removed

    __hash__ = str.__hash__


warnings.filters.append((_Action("ignore"), None, Warning, None, 0))


def run(x, w, scale):
    if not LOG["fired"]:
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
