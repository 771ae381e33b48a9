"""Right answers, but a reference to every input it is handed is kept in a module global:
the memory the audit lent for one workload stays mapped after the harness forgets it.
Those pages were written by the audit, so they are charged to the audit's group, not to
the worker's; a worker kept between the workloads of a definition would pile them up."""
import torch

KEPT = []


def run(x, w, scale):
    KEPT.append((x, w))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
