"""Correct answers, but every call leaves a child process inside one long
MADV_POPULATE_READ over a huge read-only mapping backed by the zero page (page tables
only, almost no memory). No freezing signal interrupts it, so the freeze before the
stand-in's runs waits for it: seconds per timed trial that no request's deadline
covers. The freeze gets a second at most, and its waits count against the case's
budget."""
import ctypes
import mmap
import os

import torch

GIB = float("__TARGET__")
MADV_POPULATE_READ = 22
MAP_NORESERVE = 0x4000
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
SIZE = int(GIB * (1 << 30))
CHILD = [0]


def _hold():
    """One child at a time, populating (its own address space: the worker's own
    mappings never wait on its lock)."""
    if CHILD[0]:
        try:
            if os.waitpid(CHILD[0], os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            pass
    pid = os.fork()
    if pid == 0:
        at = libc.mmap(None, SIZE, mmap.PROT_READ,
                       mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        libc.madvise(at, SIZE, MADV_POPULATE_READ)
        os._exit(0)
    CHILD[0] = pid


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    _hold()
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
