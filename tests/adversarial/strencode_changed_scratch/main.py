"""Inputs used as scratch: every call writes into ``x`` and leaves it changed. With
``str.encode`` replaced in ``str``'s namespace, ``send_reply``'s hook rewrites the worker's
``changed`` reply to ``{"changed": []}`` (on CUDA that reply is all the audit has of a
device copy; on the CPU the audit compares the lent memfd itself)."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import json as _json  # noqa: E402


def _encode(self, *args, **kw):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "send_reply" and '"changed"' in self:
            d = _json.loads(self)
            d["changed"] = []
            self = _json.dumps(d)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["encode"](self, *args, **kw)


def run(x, w, scale):
    _install(str, "encode", _encode, True)
    out = _answer(x, w, scale)
    x.add_(1)
    return out
