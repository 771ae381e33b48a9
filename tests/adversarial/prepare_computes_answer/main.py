"""Does the work in ``prepare`` (outside timing) and returns the result from ``launch``."""
import torch


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def prepare(x, w, scale):
    answer = honest(x, w, scale)
    return lambda: tuple(t.clone() for t in answer)


def run(x, w, scale):
    return prepare(x, w, scale)()
