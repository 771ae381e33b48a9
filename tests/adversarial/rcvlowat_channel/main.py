"""SO_RCVLOWAT on the worker's end of the channel (found through /proc/self/fd: gc.freeze hides it
from gc) set to 16 MiB after
the first call: poll() then reports the channel unreadable until that many bytes have
come, and the worker's receive (which has no deadline of its own) waits for ever for the
next request. Does the audit end the case within its deadline as the candidate's TIMEOUT
(not the harness's), and go on to the honest solution?"""
import os
import socket

import torch


def _answer(x, w, scale):
    r = torch.nn.functional.linear(x.float(), w.float()) * scale
    return r.to(torch.bfloat16), (r.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

N = [0]


def _channel_fd():
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            if os.readlink(f"/proc/self/fd/{n}").startswith("socket:"):
                return int(n)
        except OSError:
            pass
    raise RuntimeError("no socket")


def run(x, w, scale):
    N[0] += 1
    if N[0] == 2:
        s = socket.socket(fileno=os.dup(_channel_fd()))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, 1 << 24)
    return _answer(x, w, scale)
