"""Stall inside the harness's own step with no Python code at all: the wakeup fd is a
pipe the candidate filled and then set blocking (set_wakeup_fd only checks the mode when it
is set). A helper process sends SIGINT (whose baseline Python handler the worker itself
keeps) right after each call returns: the interpreter's C signal handler blocks for ever
in write() on the full pipe, in the middle of the harness's step after the calls. Does
the audit stop the case within its deadline, as the candidate's TIMEOUT, and go on?"""
import os
import signal
import time

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

R, W = os.pipe()
os.set_blocking(W, False)
try:
    while True:
        os.write(W, b"x" * 65536)
except BlockingIOError:
    pass
signal.set_wakeup_fd(W, warn_on_full_buffer=False)
os.set_blocking(W, True)
_PARENT = os.getpid()
_PR, _PW = os.pipe()
if os.fork() == 0:
    os.close(_PW)
    while os.read(_PR, 1):
        time.sleep(0.0001)
        os.kill(_PARENT, signal.SIGINT)
    os._exit(0)
os.close(_PR)


def run(x, w, scale):
    out = _answer(x, w, scale)
    os.write(_PW, b"x")
    return out
