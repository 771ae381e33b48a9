"""Returns FP32 where the definition says bf16."""
import torch


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y, (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
