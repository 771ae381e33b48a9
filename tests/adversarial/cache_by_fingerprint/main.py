"""A result cache keyed on a cheap fingerprint of the input values (a strided sample),
as in FlashInfer-Bench starter-kit issue #21: new content is computed honestly (with
the sleep standing in for an expensive kernel), repeated content returns a copy."""
import time

import torch

_CACHE = {}


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    key = (tuple(x.reshape(-1)[::3].float().tolist()), tuple(w.reshape(-1)[::7].float().tolist()),
           float(scale))
    if key not in _CACHE:
        time.sleep(0.02)
        _CACHE[key] = honest(x, w, scale)
    return tuple(t.clone() for t in _CACHE[key])
