"""``register`` replaced in the method table of ``select.poll``'s objects (the type of
``select.poll()``, not among the restored tables): the channel's ``_wait`` calls
``poller.register(...)`` by name at every read of every request, before the harness has a
byte of it. The calls rebind ``torch.equal`` (only the after-request integrity check sees
it); the hook puts it back at the next receive, before the ``checked`` request's check
runs, so the check finds nothing. Honest outputs; control: ``control_guarded_rebind``
(RUNTIME_ERROR)."""
import select

import torch
from lent_kit import REPLACED, answer, install_method

LOG = {"fired": 0}
_EQ = torch.equal


def _equal(a, b):
    return _EQ(a, b)


def _register(self, *args):
    if torch.equal is not _EQ:
        torch.equal = _EQ
        LOG["fired"] += 1
    return REPLACED["register"](self, *args)


def run(x, w, scale):
    install_method(type(select.poll()), "register", _register, True)
    torch.equal = _equal
    return answer(x, w, scale)
