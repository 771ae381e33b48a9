"""Scribbles on an input during one call and undoes it on the next."""
import torch

_SAVED = {}


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if "w" in _SAVED:
        w.copy_(_SAVED.pop("w"))
    else:
        _SAVED["w"] = w.clone()
        w.mul_(0.5)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
