"""Starts a child whose main thread exits with SYS_exit while another thread keeps running:
the process shows as a zombie leader ("State: Z") but is alive."""
import ctypes
import os
import threading
import time

import torch

_STARTED = []


def _child() -> None:
    threading.Thread(target=lambda: time.sleep(600), daemon=False).start()
    ctypes.CDLL(None).syscall(60, 0)  # SYS_exit: this thread only


def run(x, w, scale):
    if not _STARTED:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            _child()
        _STARTED.append(pid)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
