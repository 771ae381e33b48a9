"""A fast honest kernel (~0.15 ms on this CPU) that claims ~0.0001 ms: the guard's slack
(>= GUARD_MIN_MS = 0.25 ms per trial, 3 x the stand-in's spread) is larger than the
whole honest time, so a claim of nothing is never flagged. Forged with the same
profile-callback trick (the serving frame's t0 set to just before its clock read)."""
import sys
import time

import numpy.random  # noqa: F401
import torch

_clock = time.perf_counter


def _hook(frame, event, arg):
    if event == "c_call" and arg is _clock and frame.f_code.co_name == "trial":
        local = frame.f_locals
        if "results" in local and "elapsed" not in local and "t0" in local:
            local["t0"] = _clock() - 1e-7
            sys.setprofile(None)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    sys.setprofile(_hook)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
