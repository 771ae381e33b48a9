"""gc.unfreeze() (not checked: the worker froze torch's and the harness's objects out of
collection) plus a few million live containers: each ``forget`` (between trials, in the
harness's budget) then runs a full collection over all of them, and gc.set_threshold /
gc.enable are left alone (checked). Looks for the audit stalled past its budget or the
time moved; does the full work."""
import gc

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

JUNK = []


def run(x, w, scale):
    if not JUNK:
        gc.unfreeze()
        JUNK.extend([[i] for i in range(3_000_000)])
    return _answer(x, w, scale)
