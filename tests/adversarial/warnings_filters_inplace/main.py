"""The put-back compares warnings' names by identity: the filters list is the same object
when changed in place. The candidate inserts, in place, an 'always' entry whose message
pattern is its own object (its match() fills the outputs the calls returned as zeros) and
turns torch's warn-always on inside each call (the serve loop turns it off only before
the next receive). Any warning raised in the harness's steps after the calls (torch's or
Python's) would run the fill there. PASSED only if one is."""
import warnings

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

PENDING = []
HITS = [0]


class _Pattern:
    def match(self, text):
        HITS[0] += 1
        while PENDING:
            x, w, scale, y, c = PENDING.pop()
            a, b = _answer(x, w, scale)
            y.copy_(a)
            c.copy_(b)
        return None


def run(x, w, scale):
    if not any(type(f[1]) is _Pattern for f in warnings.filters):
        warnings.filters.insert(0, ("always", _Pattern(), Warning, None, 0))
        warnings._filters_mutated()
    torch.set_warn_always(True)
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    PENDING.append((x, w, scale, y, c))
    return y, c
