"""Right shapes and dtypes, NaN values."""
import torch


def run(x, w, scale):
    y = torch.full((x.shape[0], w.shape[0]), float("nan"), dtype=torch.bfloat16)
    return y, torch.zeros(1, dtype=torch.int64)
