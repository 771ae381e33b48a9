"""Honest outputs computed in the calls, but every call rebinds ``json.dumps`` (a name of
the message path): the trial's put-back restores it and refuses the trial ("harness
integrity: candidate code replaced json.dumps", before ``collect``). With ``str.encode``
replaced in ``str``'s namespace (``gc.get_referents``, type cache emptied, version reset
by ``PyType_Modified``), ``send_reply``'s hook replaces that refusal by an ok reply of its
own making (outputs in their slots, a claim) and writes the answers the calls computed
into the slots. Control: ``control_rebind_dumps`` (RUNTIME_ERROR)."""
import sys as _sys

import torch
from lent_kit import REPLACED as _ORIG
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import json as _json  # noqa: E402

_REAL_DUMPS = _json.dumps
_LAST = {}


def _encode(self, *args, **kw):
    try:
        f = _sys._getframe(1)
        s = f.f_back
        if f.f_code.co_name == "send_reply" and s is not None and s.f_code.co_name == "serve":
            loc = s.f_locals
            if loc.get("op") == "trial" and '"error"' in self and "json.dumps" in self:
                worker, ids = loc["self"], loc["request"]["ids"]
                n = loc["request"]["n_outputs"]
                for k, set_id in enumerate(ids):
                    outs = _LAST[set_id]
                    for j in range(n):
                        worker.slots[k][j].copy_(outs[j])
                forged = {"ok": True, "outputs": [[None] * n for _ in ids],
                          "event_ms": 0.05 * len(ids), "gated": False,
                          "phases_ms": {"inputs": 0.01, "calls": 0.05, "outputs": 0.01},
                          "nonce": loc["nonce"]}
                self = _REAL_DUMPS(forged)
                LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["encode"](self, *args, **kw)


def run(x, w, scale):
    _install(str, "encode", _encode, True)
    _json.dumps = lambda *a, **k: _REAL_DUMPS(*a, **k)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = (y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        t = f.f_locals
        for set_id in t["ids"]:
            if t["self"].sets[set_id][0] is x:
                _LAST[set_id] = out
    return out
