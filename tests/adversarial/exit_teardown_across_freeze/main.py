"""Tries to slow the stand-in (inflating the floor and the guard's slack) while the
candidate's group is frozen: a child holding ~600 MB is SIGKILLed as the `changed`
request (the last one before the freeze) is served, so the kernel tears its address
space down (in the child's own context) while the audit freezes the group and times the
stand-in. A new child is made in `forget` (after the thaw, outside every clock). The
device time is forged to 0.4 x the request's duration, which only a larger slack or
floor would let through."""
import mmap
import os
import signal
import time

import lent_kit
import numpy.random  # noqa: F401
import torch

SIZE = 600 << 20
_child = []
_PATCHED = []


def _spawn():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        m = mmap.mmap(-1, SIZE)
        for off in range(0, SIZE, 4096):
            m[off] = 1
        os.write(w, b"x")
        while True:
            time.sleep(100)
    os.read(r, 1)
    os.close(r)
    os.close(w)
    _child.append(pid)


def _patch():
    for obj in lent_kit.handler_tables():
        real_trial, real_changed, real_forget = obj["trial"], obj["changed"], obj["forget"]

        def trial(request):
            t0 = time.perf_counter()
            reply = real_trial(request)  # noqa: B023 - bound once
            reply["event_ms"] = min(reply["event_ms"],
                                    0.4 * (time.perf_counter() - t0) * 1e3)
            return reply

        def changed(request):
            reply = real_changed(request)  # noqa: B023 - bound once
            while _child:
                pid = _child.pop()
                os.kill(pid, signal.SIGKILL)
            return reply

        def forget(request):
            reply = real_forget(request)  # noqa: B023 - bound once
            for _pid in list(_child):
                pass
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            except ChildProcessError:
                pass
            if not _child:
                _spawn()
            return reply

        obj.update(trial=trial, changed=changed, forget=forget)
        _PATCHED.append(obj)


def run(x, w, scale):
    if not _PATCHED:
        _patch()
        _spawn()
    lent_kit.busy()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
