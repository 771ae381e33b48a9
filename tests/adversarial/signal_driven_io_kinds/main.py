"""Every way to have the kernel signal the worker when a file is ready or touched, each on
a pipe of the candidate's own (as it would on the channel): an owner (``F_SETOWN``,
``F_SETOWN_EX``, ``FIOSETOWN``, ``SIOCSPGRP``), a chosen signal (``F_SETSIG``), O_ASYNC
(``F_SETFL``, ``FIOASYNC``) and a lease (``F_SETLEASE``, on a file). Raises, naming them,
only if all are refused and ``F_SETFL`` with O_NONBLOCK alone still works; otherwise it
returns the right answer (and would PASS)."""
import fcntl
import os
import struct
import tempfile

import lent_kit
import torch

_why = lent_kit.refusal
F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE = 8, 10, 15, 1024
FIOASYNC, FIOSETOWN, SIOCSPGRP = 0x5452, 0x8901, 0x8902


def _on_pipe(action):
    def attempt():
        read, write = os.pipe()
        try:
            action(read)
        finally:
            os.close(read)
            os.close(write)
    return attempt


def _lease():
    with tempfile.TemporaryFile() as handle:
        fcntl.fcntl(handle.fileno(), F_SETLEASE, fcntl.F_RDLCK)


def run(x, w, scale):
    me = struct.pack("i", os.getpid())
    refused = {
        "F_SETOWN": _why(_on_pipe(lambda fd: fcntl.fcntl(fd, F_SETOWN, os.getpid()))),
        "F_SETOWN_EX": _why(_on_pipe(lambda fd: fcntl.fcntl(
            fd, F_SETOWN_EX, struct.pack("ii", 1, os.getpid())))),
        "F_SETSIG": _why(_on_pipe(lambda fd: fcntl.fcntl(fd, F_SETSIG, 32))),
        "O_ASYNC": _why(_on_pipe(lambda fd: fcntl.fcntl(
            fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC))),
        "FIOASYNC": _why(_on_pipe(lambda fd: fcntl.ioctl(fd, FIOASYNC, struct.pack("i", 1)))),
        "FIOSETOWN": _why(_on_pipe(lambda fd: fcntl.ioctl(fd, FIOSETOWN, me))),
        "SIOCSPGRP": _why(_on_pipe(lambda fd: fcntl.ioctl(fd, SIOCSPGRP, me))),
        "F_SETLEASE": _why(_lease)}
    plain = _why(_on_pipe(lambda fd: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)))
    if all(refused.values()) and plain is None:
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
