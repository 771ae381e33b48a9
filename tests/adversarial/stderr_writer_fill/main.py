"""sys is not on the message path: sys.stderr and sys.__stderr__ replaced by a writer of
the candidate's, whose write() fills the outputs the calls returned as zeros. Whatever the
harness writes to stderr in its steps after the calls (a warning shown, an unraisable
error reported) would run the fill there. PASSED only if something is written."""
import sys

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

PENDING = []


class _Writer:
    def __init__(self, real):
        self.real = real

    def write(self, text):
        while PENDING:
            x, w, scale, y, c = PENDING.pop()
            a, b = _answer(x, w, scale)
            y.copy_(a)
            c.copy_(b)
        return self.real.write(text)

    def flush(self):
        return self.real.flush()

    def __getattr__(self, name):
        return getattr(self.real, name)


sys.stderr = _Writer(sys.stderr)
sys.__stderr__ = sys.stderr


def run(x, w, scale):
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    PENDING.append((x, w, scale, y, c))
    return y, c
