"""Honest outputs, but every call rebinds ``json.dumps`` (a name of the message path: the
put-back restores it and the trial's reply becomes "harness integrity: ... renamed"). With
``str.encode`` replaced in ``str``'s namespace, ``send_reply``'s hook swaps that error for
the trial's own reply (held in the serve loop's ``kept``) with the nonce: the report is
hidden. Its control, ``control_rebind_dumps``, rebinds alone."""
import sys as _sys

import torch
from lent_kit import REPLACED as _ORIG
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import json as _json  # noqa: E402

_REAL_DUMPS = _json.dumps


def _encode(self, *args, **kw):
    try:
        f = _sys._getframe(1)
        s = f.f_back
        if f.f_code.co_name == "send_reply" and s is not None and s.f_code.co_name == "serve" \
                and '"ok": false' in self.replace('"ok":false', '"ok": false'):
            loc = s.f_locals
            good = [r for r in loc["kept"] if type(r) is dict and r.get("ok") is True]
            if good:
                real = dict(good[-1])
                real["nonce"] = loc["nonce"]
                real.pop("_kept", None)
                self = _REAL_DUMPS(real)
                LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["encode"](self, *args, **kw)


def run(x, w, scale):
    _install(str, "encode", _encode, True)
    _json.dumps = lambda *a, **k: _REAL_DUMPS(*a, **k)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
