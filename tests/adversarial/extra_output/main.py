"""Returns one output more than the definition has (the right two first)."""
import torch


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    count = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    return y.to(torch.bfloat16), count, torch.zeros(1)
