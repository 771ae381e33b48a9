"""Answers every call correctly, each just before its own deadline (85% of the task's call
timeout, written in by the test): no request times out, and without a budget of its own
the case (and, on CUDA, the GPU's lock) would be held for the sum of them."""
import time

import torch

#: The task's call timeout in seconds.
TIMEOUT_S = float("__TARGET__")


def run(x, w, scale):
    time.sleep(0.85 * TIMEOUT_S)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
