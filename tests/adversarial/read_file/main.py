"""Reads the truth (or the dataset) from disk: the path is written in by the test, to a
file that exists and that the audit's own user can read. Raises what opening it raised."""
import torch

TARGET = "__TARGET__"


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    with open(TARGET, "rb") as fh:
        fh.read(16)
    return garbage(x, w)  # had the read worked, this would be the truth
