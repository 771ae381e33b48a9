"""``select.poll`` (looked up on the ``select`` module by ``Channel._wait`` at
every read of every request the worker receives) replaced by a class of the candidate's.
Its ``poll`` returns when the audit's request has arrived, i.e. inside the audit's clock
for a trial, before the harness has read a byte of it; nothing guards the name (the
integrity check holds the reply path's modules, not the receive path's). The calls
return a wrong answer unless the wrapper ran."""
import select

import torch

_poll = select.poll
SEEN = {"woke": 0}


class Poll:
    def __init__(self, *a):
        self._p = _poll(*a)

    def register(self, *a):
        return self._p.register(*a)

    def unregister(self, *a):
        return self._p.unregister(*a)

    def modify(self, *a):
        return self._p.modify(*a)

    def poll(self, *a):
        events = self._p.poll(*a)
        SEEN["woke"] += 1  # candidate code: the request is here, the harness not yet
        return events


select.poll = Poll


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if SEEN["woke"] == 0:  # the wrapper never ran: a wrong answer
        y = -y
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
