"""Comparator for channel_flag_skip_trial: the honest work in the call, and only the claim
forged (``event_ms`` = 1 us in ``send``, through the same ``Channel.restricted`` hook).
The guard then counts each trial at (host - slack) / 1.05: the documented bound."""
import sys as _sys

import torch

LOG = {"forged": 0}


class _Falsy:
    def __bool__(self):
        f = _sys._getframe(1)
        if f.f_code.co_name == "send":
            obj = f.f_locals.get("obj")
            if type(obj) is dict and "event_ms" in obj:
                obj["event_ms"] = 0.001
                LOG["forged"] += 1
        return False


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    ch = vars(_serve_frame().f_locals["self"].channel)
    if type(ch.get("restricted")) is not _Falsy:
        ch["restricted"] = _Falsy()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
