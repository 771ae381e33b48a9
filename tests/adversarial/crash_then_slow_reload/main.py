"""An import that sleeps (seconds written in by the test), a crash on the first workload
(one row), then right answers at 0.4 s a call: each workload after the crash needs its
worker loaded again, and that load counts against its budget."""
import os
import time

import torch

time.sleep(float("__TARGET__"))


def run(x, w, scale):
    if x.shape[0] == 1:
        os.abort()
    time.sleep(0.4)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
