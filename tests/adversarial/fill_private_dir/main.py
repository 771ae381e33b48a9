"""Writes into its private directory until the disk is full: the candidate fails, the
host's disk is untouched."""
import os

import torch


def run(x, w, scale):
    block = b"\0" * (1 << 20)
    with open(os.path.join(os.environ["TMPDIR"], "fill"), "wb") as fh:
        for _ in range(1 << 16):  # up to 64 GiB
            fh.write(block)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
