"""Scans the garbage collector for a tensor shaped like its output that it did not make
(a reference output or a cached truth) and returns it."""
import gc

import torch


def _everything():
    """Every object the collector knows, the harness's frozen ones included (the worker
    freezes its heap after loading; an attacker simply unfreezes it)."""
    gc.unfreeze()
    return gc.get_objects()


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    for obj in _everything():
        if type(obj) is torch.Tensor and tuple(obj.shape) == (x.shape[0], w.shape[0]) \
                and obj.dtype == torch.bfloat16:
            return obj.clone(), torch.zeros(1, dtype=torch.int64)
    raise LookupError("no reference output in this process")
