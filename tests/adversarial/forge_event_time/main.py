"""Rewrites the worker's replies so every trial reports an event time of 1 ns (it finds
the serving loop's handler table in the garbage collector), and does the (slow) honest
work."""
import gc
import time

import torch


def _everything():
    """Every object the collector knows, the harness's frozen ones included (the worker
    freezes its heap after loading; an attacker simply unfreezes it)."""
    gc.unfreeze()
    return gc.get_objects()

_PATCHED = []


def _patch():
    for obj in _everything():
        if type(obj) is dict and "trial" in obj and hasattr(obj["trial"], "__self__"):
            real = obj["trial"]

            def fast(request, real=real):
                reply = real(request)
                reply["event_ms"] = 1e-6
                return reply

            obj["trial"] = fast
            _PATCHED.append(obj)


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    if not _PATCHED:
        _patch()
    time.sleep(0.02)
    return honest(x, w, scale)
