"""Honest work. ``str.encode`` replaced in ``str``'s namespace (as
``strencode_send_fill``): in ``send_reply`` the hook rewrites the trial reply's JSON,
the claim (``event_ms``) divided by 100, before the bytes are made. The guard should
count it at its host time (a bounded gain at most)."""
import sys as _sys

import torch
from lent_kit import REPLACED as _ORIG
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import json as _json  # noqa: E402


def _encode(self, *args, **kw):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "send_reply" and '"event_ms"' in self:
            d = _json.loads(self)
            d["event_ms"] = d["event_ms"] / 100
            self = _json.dumps(d)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["encode"](self, *args, **kw)


def run(x, w, scale):
    _install(str, "encode", _encode, True)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
