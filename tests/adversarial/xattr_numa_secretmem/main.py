"""Three kinds of kernel state no cgroup charges: a POSIX ACL (here any extended
attribute) on a file of the worker's own tmpfs, up to 64 KiB of kernel memory each, set
by ``setxattr``, ``lsetxattr``, ``fsetxattr`` or ``setxattrat``; a NUMA policy of a
mapping (``mbind``, ``set_mempolicy_home_node``), which a shared tmpfs mapping keeps on
its file after it is unmapped; and ``memfd_secret``, whose pages are cut out of the
kernel's direct map, splitting the host's large pages for good. Raises, naming them, only
if every call is refused; if any is taken it returns the right answer (and would PASS)."""
import ctypes
import mmap
import os
import tempfile

import lent_kit
import torch

_oserror = lent_kit.refusal

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
# x86_64 numbers
SETXATTRAT, MBIND, SET_MEMPOLICY_HOME_NODE, MEMFD_SECRET = 463, 237, 450, 447
MPOL_BIND, AT_FDCWD = 2, -100


class _XattrArgs(ctypes.Structure):
    _fields_ = [("value", ctypes.c_uint64), ("size", ctypes.c_uint32),
                ("flags", ctypes.c_uint32)]


def _raw(number, *args):
    result = _libc.syscall(number, *args)
    if result >= 0 and number == MEMFD_SECRET:
        os.close(result)
    return os.strerror(ctypes.get_errno()) if result < 0 else None


def run(x, w, scale):
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "f")
    with open(path, "w"):
        pass
    value = ctypes.create_string_buffer(b"1")
    args = _XattrArgs(ctypes.addressof(value), 1, 0)
    region = mmap.mmap(-1, 1 << 16)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    nodes = ctypes.c_ulong(1)
    fd = os.open(path, os.O_RDONLY)
    try:
        refused = {
            "setxattr": _oserror(lambda: os.setxattr(path, "user.probe", b"1")),
            "lsetxattr": _oserror(lambda: os.setxattr(path, "user.probe", b"1",
                                                      follow_symlinks=False)),
            "fsetxattr": _oserror(lambda: os.setxattr(fd, "user.probe", b"1")),
            "setxattrat": _raw(SETXATTRAT, AT_FDCWD, path.encode(), 0, b"user.probe",
                               ctypes.byref(args), ctypes.sizeof(args)),
            "mbind": _raw(MBIND, ctypes.c_void_p(address), ctypes.c_ulong(1 << 16),
                          MPOL_BIND, ctypes.byref(nodes), ctypes.c_ulong(64), 0),
            "set_mempolicy_home_node": _raw(SET_MEMPOLICY_HOME_NODE, ctypes.c_void_p(address),
                                            ctypes.c_ulong(1 << 16), 0, 0),
            "memfd_secret": _raw(MEMFD_SECRET, 0)}
    finally:
        os.close(fd)
        del address
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
