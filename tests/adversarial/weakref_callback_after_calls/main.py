"""A weakref callback on ``trial``'s list comprehension function (found through
``gc.get_referrers`` of its code): it dies as the comprehension returns, so the callback
runs in ``trial`` right after the calls and BEFORE the put-back of the message path. The
callback rebinds ``hf_eval.isolation.server._restore_signals`` (called by name after the
put-back) to a function that writes the answers into the returned zeros. HELD if the
put-back restores the name first (reported: RUNTIME_ERROR)."""
import gc
import sys as _sys
import weakref

import torch

_SRV = _sys.modules["hf_eval.isolation.server"]
LOG = {"cb": 0, "fired": 0}
_REFS = []


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _cb(_):
    LOG["cb"] += 1
    orig = vars(_SRV)["_restore_signals"]

    def hook(replaced):
        t = _sys._getframe(1)
        loc = t.f_locals
        for set_id, outs in zip(loc["ids"], loc["results"]):
            y, c = _answer(*vars(loc["self"])["sets"][set_id])
            outs[0].copy_(y)
            outs[1].copy_(c)
        LOG["fired"] += 1
        vars(_SRV)["_restore_signals"] = orig
        return orig(replaced)
    vars(_SRV)["_restore_signals"] = hook


def run(x, w, scale):
    f = _sys._getframe(1)
    if f.f_code.co_name == "<lambda>":
        f = f.f_back
    code = f.f_code
    for r in gc.get_referrers(code):
        if type(r).__name__ == "function" and r.__code__ is code:
            _REFS.append(weakref.ref(r, _cb))
    del f
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
