"""signal.set_wakeup_fd raises no audit event and nothing in the worker resets it. The
candidate points it at the worker's own channel socket (found through /proc/self/fd: gc.freeze
hides it from gc), sets a
Python handler for SIGURG and signals itself inside its first call: the interpreter's C
signal handler writes the signal number, one byte, straight into the channel, ahead of
the reply's frame. Does the audit read a stray byte as the candidate's tampering (its
RUNTIME_ERROR) and go on, or blame the harness / stall?"""
import os
import signal

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

DONE = []


def _channel_fd():
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            if os.readlink(f"/proc/self/fd/{n}").startswith("socket:"):
                return int(n)
        except OSError:
            pass
    raise RuntimeError("no socket")


def run(x, w, scale):
    if not DONE:
        DONE.append(1)
        fd = _channel_fd()
        os.set_blocking(fd, False)
        signal.set_wakeup_fd(fd, warn_on_full_buffer=False)
        signal.signal(signal.SIGURG, lambda *a: None)
        os.kill(os.getpid(), signal.SIGURG)
    return _answer(x, w, scale)
