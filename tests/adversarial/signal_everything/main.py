"""Sends SIGSTOP and SIGKILL to every process it may signal (the audit, the spawner and
the stand-in must not be among them), then answers honestly."""
import os
import signal

import torch


def run(x, w, scale):
    for number in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(-1, number)
        except OSError:
            pass
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
