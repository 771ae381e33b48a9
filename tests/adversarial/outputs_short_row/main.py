"""Returns an output one row short (an older audit sampled its seal past the end and
stopped)."""
import torch


def run(x, w, scale):
    y = (torch.nn.functional.linear(x.float(), w.float()) * scale).to(torch.bfloat16)[:-1]
    return y, (y.float().sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
