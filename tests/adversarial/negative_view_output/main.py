"""The right answer returned as a lazy negation (``torch._neg_view`` of its negative): the
negation is carried out by whoever reads it, here the harness's copy into the slot, after
the clock. Refused by the output's keys (a plain dense tensor has no Negative key)."""
import torch


def _honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def run(x, w, scale):
    y, c = _honest(x, w, scale)
    return torch._neg_view(-y), c
