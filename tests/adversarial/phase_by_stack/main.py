"""Phase detection by call stack: remembers the stack of its first call and returns
garbage whenever it is called from a different one (a timing loop). The work it skips
is the sleep, a stand-in for an expensive kernel."""
import sys
import time

import torch

_FIRST = []


def honest(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def garbage(x, w):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


def _stack():
    frame, names = sys._getframe(1), []
    while frame is not None:
        names.append((frame.f_code.co_filename, frame.f_code.co_name))
        frame = frame.f_back
    return names


def run(x, w, scale):
    stack = _stack()
    if not _FIRST:
        _FIRST.append(stack)
    if stack != _FIRST[0] or any("time" in name for _, name in stack):
        return garbage(x, w)
    time.sleep(0.02)
    return honest(x, w, scale)
