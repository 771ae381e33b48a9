"""Two kinds of kernel state no cgroup charges, each tried: files on the worker's own
tmpfs mounts (its private directory, ``/dev/shm``), each inode with a security record of
its own, millions of which also keep a killed worker in the kernel while its exit frees
them; and names for anonymous mappings (``prctl(PR_SET_VMA)``). Raises, naming them, only
if both tmpfs hold at most 65,536 files and naming is refused; else it returns the right
answer (and would PASS)."""
import ctypes
import mmap
import os
import tempfile

import torch

PR_SET_VMA, PR_SET_VMA_ANON_NAME = 0x53564D41, 0
_libc = ctypes.CDLL(None, use_errno=True)


def run(x, w, scale):
    held = {}
    for name, path in (("private", tempfile.gettempdir()), ("shm", "/dev/shm")):
        files = os.statvfs(path).f_files
        held[name] = f"{files} files" if 0 < files <= 65536 else None
    region = mmap.mmap(-1, 4096)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    label = ctypes.c_char_p(b"probe")
    result = _libc.prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ctypes.c_ulong(address),
                         ctypes.c_ulong(4096), label)
    held["vma name"] = os.strerror(ctypes.get_errno()) if result != 0 else None
    if all(held.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in held.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
