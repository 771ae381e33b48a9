"""Right answers, after an import that sleeps (seconds written in by the test): under
the load's own deadline, but every later load of the solution (a new worker for a later
workload) counts against that workload's budget."""
import time

import torch

time.sleep(float("__TARGET__"))


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
