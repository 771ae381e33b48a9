"""Right answers, after an import that sleeps (seconds written in by the test): within
the load's own deadline, and more than a short case's budget. A new worker the audit
starts for a later workload loads it again, which counts against no case."""
import time

import torch

time.sleep(float("__TARGET__"))


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
