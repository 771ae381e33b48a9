"""Calls ``abort()`` in its second call (a timed one): the record must blame the
candidate's crash and name abort() among the causes of the fault it ends in."""
import os

import torch

_calls = [0]


def run(x, w, scale):
    _calls[0] += 1
    if _calls[0] == 2:
        os.abort()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
