"""Phase detection by call spacing: a call that follows the previous one closely is taken
to be part of a timing loop and returns garbage. ("Closely" is generous, 5 s, so that the
test does not depend on how fast the machine runs the audit between calls.)"""
import time

import torch

_LAST = [None]


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def run(x, w, scale):
    now, last = time.monotonic(), _LAST[0]
    _LAST[0] = now
    if last is not None and now - last < 5.0:
        return garbage(x, w)
    return honest(x, w, scale)
