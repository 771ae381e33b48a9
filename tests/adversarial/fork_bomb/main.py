"""Forks sleeping children until the kernel refuses: the refusal is the candidate's."""
import os
import time

import torch


def run(x, w, scale):
    for _ in range(1 << 16):
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
