"""Installs a seccomp filter of its own, by ``seccomp`` and by ``prctl`` (each thread may
stack filters: kernel memory no cgroup charges), and makes a native AIO context (counted
against a host-wide limit). Raises, naming them, only if all three are refused; if any
is taken it returns the right answer (and would PASS)."""
import ctypes
import os

import torch

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int
SYS_SECCOMP, SYS_IO_SETUP = 317, 206  # x86_64
SECCOMP_SET_MODE_FILTER, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 22, 2


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Filter))]


_ALLOW = (_Filter * 1)(_Filter(0x06, 0, 0, 0x7FFF0000))  # return ALLOW
_PROGRAM = _Program(1, ctypes.cast(_ALLOW, ctypes.POINTER(_Filter)))


def _why(result):
    return os.strerror(ctypes.get_errno()) if result < 0 else None


def run(x, w, scale):
    context = ctypes.c_ulong(0)
    refused = {
        "seccomp": _why(_libc.syscall(SYS_SECCOMP, SECCOMP_SET_MODE_FILTER, 0,
                                      ctypes.byref(_PROGRAM))),
        "prctl seccomp": _why(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                                          ctypes.byref(_PROGRAM), 0, 0)),
        "io_setup": _why(_libc.syscall(SYS_IO_SETUP, 1, ctypes.byref(context)))}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
