"""A file put at the channel's descriptor number: at import, the candidate keeps a copy of
the worker's socket, puts one end of a socket pair of its own at the socket's number
(``os.dup2``, plain Python), and relays every message, descriptors included, between the
two with threads, so that it could read and rewrite each one. The worker's own socket
object and its class are untouched. It answers wrong unless a request reached the worker
through its relay."""
import _thread
import array
import os
import socket
import sys

import torch

RELAYED = [0]


def _worker():
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        frame = frame.f_back
    return None


def _pump(source: socket.socket, target: socket.socket, requests: bool) -> None:
    room = socket.CMSG_LEN(250 * array.array("i").itemsize)
    while True:
        data, ancillary, _, _ = source.recvmsg(1 << 20, room)
        if not data:
            return
        fds = array.array("i")
        for _, _, payload in ancillary:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        target.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)] if fds else [])
        if requests:
            RELAYED[0] += 1
        for fd in fds:
            os.close(fd)


WORKER = _worker()
if WORKER is not None:
    number = WORKER.channel.sock.fileno()
    original = socket.socket(fileno=os.dup(number))
    mine, relay = socket.socketpair()
    os.dup2(mine.fileno(), number)
    _thread.start_new_thread(_pump, (original, relay, True))
    _thread.start_new_thread(_pump, (relay, original, False))


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if not RELAYED[0]:
        y = torch.zeros_like(y)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
