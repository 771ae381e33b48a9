"""A finalizer planted in the serve loop's local ``result`` (the previous message's reply
dict, held by nothing else once ``kept`` was cleared at the loop's top). The trial's
``result = handler(request)`` frees it right after the trial returns: the candidate's
code runs in the serve loop with the trial's reply in hand, before the put-back, and sets
``event_ms`` (the CPU clock's claim) to 0.001 ms. The calls do the honest work."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


class _Evil:
    def __del__(self):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "serve":
                f = f.f_back
            loc = f.f_locals
            reply = loc.pop("result")  # (no hold left in the snapshot)
            if "event_ms" in reply:
                reply["event_ms"] = 0.001
            LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


def _plant():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    if f is None:
        return
    old = f.f_locals.get("result")
    if type(old) is dict and "_planted" not in old:
        old["_planted"] = _Evil()
    # the frame's locals snapshot (made by f_locals) holds the dict too: drop that hold
    f.f_locals.pop("result", None)


def run(x, w, scale):
    _plant()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
