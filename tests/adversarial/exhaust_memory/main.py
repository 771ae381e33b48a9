"""Allocates and touches far more memory than the worker may have: the worker is killed,
the audit is not."""
import torch

_HOLD = []


def run(x, w, scale):
    for _ in range(64):
        _HOLD.append(torch.ones(256 << 20, dtype=torch.uint8))  # 256 MiB each, touched
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
