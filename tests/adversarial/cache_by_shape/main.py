"""A result cache keyed on shapes only: stale as soon as the content changes."""
import torch

_CACHE = {}


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    key = (tuple(x.shape), tuple(w.shape))
    if key not in _CACHE:
        _CACHE[key] = honest(x, w, scale)
    return tuple(t.clone() for t in _CACHE[key])
