"""``unpack`` replaced in ``_struct.Struct``'s method table: the channel's ``_receive``
calls ``_HEADER.unpack(header)`` by name in every receive, once the header is in. As
``poll_register_restore``: the calls rebind ``torch.equal``, the hook puts it back
before the next request's handler and checks run. Control: ``control_guarded_rebind``."""
import _struct

import torch
from lent_kit import REPLACED, answer, install_method

LOG = {"fired": 0}
_EQ = torch.equal


def _equal(a, b):
    return _EQ(a, b)


def _unpack(self, *args):
    if torch.equal is not _EQ:
        torch.equal = _EQ
        LOG["fired"] += 1
    return REPLACED["unpack"](self, *args)


def run(x, w, scale):
    install_method(_struct.Struct, "unpack", _unpack, True)
    torch.equal = _equal
    return answer(x, w, scale)
