"""Honest for two calls, then dies in the middle of a timing trial (after the stand-in has
been handed that trial's sets)."""
import ctypes

import torch

_CALLS = []


def run(x, w, scale):
    _CALLS.append(1)
    if len(_CALLS) == 3:
        ctypes.string_at(0)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
