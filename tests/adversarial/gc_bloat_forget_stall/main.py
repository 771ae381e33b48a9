"""Stall: the worker collects garbage only in ``forget`` (outside any clock; automatic
collection is off). At import, and again in every call, the candidate unfreezes the heap
and builds millions of tracked container objects in reference cycles, so each ``forget``
(and the one full collection per request it triggers) walks them: seconds per harness
request. Does the case stay within its documented bound (each request's deadline, the
120 s harness budget), and is the honest solution after it unaffected?"""
import gc

import torch

_KEEP = []


def _bloat(n):
    gc.unfreeze()
    a = [[] for _ in range(n)]
    for i in range(n - 1):
        a[i].append(a[i + 1])
    _KEEP.append(a)


_bloat(3_000_000)


def run(x, w, scale):
    _bloat(500_000)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
