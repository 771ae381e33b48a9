"""No name of the message path rebound, no thread. ``collect`` reads where every output
lies through ``_span``, which makes a ``torch.UntypedStorage`` wrapper
(``_untyped_storage(t)``) and drops it; ``collect`` refuses a ``__del__`` on ``torch.Tensor``
only. The candidate sets ``torch.UntypedStorage.__del__``: if the wrapper died inside
``_span`` (after the state and kernel checks, before the copies), the finalizer would write
the right answers into the outputs (zeros). WRONG unless it ran there."""
import sys as _sys

import torch

LOG = {"fired": 0}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _del(self):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "collect":
        f = f.f_back
    if f is None:
        return
    loc = f.f_locals
    worker = loc["self"]
    for set_id, outs in loc.get("produced_now") or []:
        y, c = _answer(*worker.sets[set_id])
        outs[0].copy_(y)
        outs[1].copy_(c)
    LOG["fired"] += 1


def run(x, w, scale):
    torch.UntypedStorage.__del__ = _del
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
