"""(CUDA) Makes the ranked "cold" figure a warm-L2 one by shrinking the flush: the flush
once sized itself from ``torch.cuda.get_device_properties(...).L2_cache_size``, looked up
at each flush; replaced by a function that says 0 when the flush asks, the flush read
1 MiB instead of twice the L2 cache. The flush's size now comes with the audit's
request. If the replacement is ever consulted by the flush, the call returns garbage,
so a PASSED here means the shrink never took effect."""
import sys

import torch
from lent_kit import answer, filler

_properties = torch.cuda.get_device_properties
CONSULTED = []


class _NoCache:
    L2_cache_size = 0

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)


def _get_device_properties(device=None):
    real = _properties(device)
    if sys._getframe(1).f_code.co_name == "_flush_l2":
        CONSULTED.append(True)
        return _NoCache(real)
    return real


torch.cuda.get_device_properties = _get_device_properties


def run(x, w, scale):
    y, c = answer(x, w, scale)
    return filler(y, c) if CONSULTED else (y, c)
