"""Honest, and uses a temporary directory the way a JIT compiler does (Triton's
``tempfile.TemporaryDirectory``): it must land in the worker's private directory."""
import os
import tempfile

import torch


def run(x, w, scale):
    with tempfile.TemporaryDirectory() as scratch:
        if not scratch.startswith(os.environ["TMPDIR"]):
            raise RuntimeError(f"temporary directory outside the private one: {scratch}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
