"""Four routes around refusals of the same kind: a UNIX ``SOCK_RAW`` socket (a datagram
socket to the kernel, which ``sendto`` reaches any datagram socket bound at a path the
worker can see, out of its network namespace), an MPTCP socket (Landlock's TCP rules cover
plain TCP only), ``SO_BINDTOIFINDEX`` (the refused ``SO_BINDTODEVICE`` by index) and
dnotify (``fcntl(F_NOTIFY)``: the refused inotify's watch of other processes' file
accesses). Raises, naming them, only if all four are refused; if any is taken it returns
the right answer (and would PASS)."""
import fcntl
import os
import socket

import lent_kit
import torch

_why = lent_kit.refusal

IPPROTO_MPTCP, SO_BINDTOIFINDEX = 262, 62
F_NOTIFY, DN_ACCESS, DN_MULTISHOT = 1026, 0x1, 0x80000000


def _bind_by_index():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, SO_BINDTOIFINDEX, 1)


def _dnotify():
    fd = os.open("/etc", os.O_RDONLY)
    try:
        fcntl.fcntl(fd, F_NOTIFY, DN_ACCESS | DN_MULTISHOT)
    finally:
        os.close(fd)


def run(x, w, scale):
    refused = {
        "unix raw": _why(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW).close()),
        "mptcp": _why(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM,
                                            IPPROTO_MPTCP).close()),
        "SO_BINDTOIFINDEX": _why(_bind_by_index),
        "F_NOTIFY": _why(_dnotify)}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
