"""The honest kernel, plus one import: the worker's first unmask (inside the first timed
trial's clock) imports numpy.random (~8-15 ms), which the stand-in paid once, long
ago, outside any floor. An honest candidate pays it in trial 1 and is counted at its
host time; this one pays it at load (outside every clock) and reports its real time:
a 5-10x 'speed-up' over the identical honest kernel."""
import numpy.random  # noqa: F401
import torch


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
