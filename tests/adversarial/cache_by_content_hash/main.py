"""A result cache keyed on a full hash of every input byte: exact, so it can only ever
return correct results; it gains only if content repeats."""
import hashlib
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
    digest = hashlib.sha256()
    for t in (x, w):
        digest.update(t.contiguous().view(torch.uint8).numpy().tobytes())
    key = (digest.hexdigest(), float(scale))
    if key not in _CACHE:
        time.sleep(0.02)
        _CACHE[key] = honest(x, w, scale)
    return tuple(t.clone() for t in _CACHE[key])
