"""Writes the answer into an input's memory and returns that view."""
import torch


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = x.reshape(-1)[: y.numel()].view(y.shape)
    out.copy_(y)
    return out, (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
