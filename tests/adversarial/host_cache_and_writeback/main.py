"""Acts on the host for everyone: ``posix_fadvise(POSIX_FADV_DONTNEED)`` on a library file
the worker may read drops its pages from the host's cache (the next worker's import
reads them from disk again), and ``sync``, ``syncfs`` and ``sync_file_range`` force the
writeback of every host file system. Raises, naming them, only if every call is
refused; if any is taken it returns the right answer (and would PASS)."""
import ctypes
import os

import torch
from lent_kit import answer

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
# x86_64 numbers
SYNC, SYNCFS, SYNC_FILE_RANGE = 162, 306, 277


def _raw(number, *args):
    result = _libc.syscall(number, *args)
    return os.strerror(ctypes.get_errno()) if result < 0 else None


def _fadvise(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError as exc:
        return os.strerror(exc.errno)
    finally:
        os.close(fd)
    return None


def run(x, w, scale):
    fd = os.open(torch.__file__, os.O_RDONLY)
    try:
        refused = {"fadvise64": _fadvise(torch.__file__), "sync": _raw(SYNC),
                   "syncfs": _raw(SYNCFS, fd),
                   "sync_file_range": _raw(SYNC_FILE_RANGE, fd, 0, 0, 0)}
    finally:
        os.close(fd)
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    return answer(x, w, scale)
