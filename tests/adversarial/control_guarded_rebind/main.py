"""Control for ``unpickler_load_skip_checked``: honest outputs, but the first call
rebinds ``torch.equal`` (a GUARDED name, outside the message path: only the ``checked``
request's integrity check sees it). Must be RUNTIME_ERROR naming torch.equal."""
import torch
from lent_kit import answer

_EQ = torch.equal


def _equal(a, b):
    return _EQ(a, b)


def run(x, w, scale):
    torch.equal = _equal
    return answer(x, w, scale)
