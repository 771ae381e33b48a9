"""Control for the timing assertions: honest, with a 20 ms sleep standing in for an
expensive kernel. Every timing cheat above that skips the sleep would show up as faster."""
import time

import torch


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    time.sleep(0.02)
    return honest(x, w, scale)
