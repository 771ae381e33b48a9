"""Control for threading_erase_checked: computes honestly and leaves ``torch.equal``
replaced, with no key: the ``checked`` request's integrity check must report it
(RUNTIME_ERROR naming torch.equal)."""
import torch

_EQUAL = torch.equal


def _wrapper(a, b):
    return _EQUAL(a, b)


def run(x, w, scale):
    torch.equal = _wrapper
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
