"""Blame shift: the worker's baseline SIGINT handler (``default_int_handler``, put back by
``_restore_signals``) raises KeyboardInterrupt, a BaseException the serve loop's
``except Exception`` does not catch. A helper process signals SIGINT into the worker
right after a call returns (the first call), so it lands inside the harness's own steps.
Looks for a verdict that blames the harness (not RUNTIME_ERROR/the candidate)."""
import os
import signal
import time

import torch

_PARENT = os.getpid()
_R, _W = os.pipe()
if os.fork() == 0:
    os.close(_W)
    os.read(_R, 1)
    time.sleep(0.0002)
    os.kill(_PARENT, signal.SIGINT)
    os._exit(0)
os.close(_R)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    os.write(_W, b"x")
    return out
