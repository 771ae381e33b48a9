"""The interpreter's pending-call queue reached from Python, with no ctypes: its test
module ``_testcapi`` queues a Python callable (``_pending_threadfunc``), which would run
at the next function entry of the harness's steps and fill the outputs the calls left as
zeros. Refused at the import."""
import _testcapi

import torch

TODO = []


def _fill():
    for y_out, c_out, x, w, scale in TODO:
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        y_out.copy_(y.to(torch.bfloat16))
        c_out.copy_((y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    TODO.clear()


def run(x, w, scale):
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    TODO.append((y, c, x, w, scale))
    _testcapi._pending_threadfunc(_fill)
    return y, c
