"""As fault_handler_in_copy, but run() does nothing at all (no matmul, no count): the
C-level SIGSEGV handler computes both outputs inside the harness's copy (collect's _copy,
after every check). Measures the counted time against the honest solution's."""
import ctypes
import mmap

import torch

libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
H_T = ctypes.CFUNCTYPE(None, ctypes.c_int)
S = {"p": []}
KEEP = []


def _on_segv(signum):
    if not S["p"]:
        libc.signal(signum, 0)
        return
    for addr, size, y_out, c_out, x, w, scale in S["p"]:
        libc.mprotect(addr, size, 3)
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        y_out.copy_(y.to(torch.bfloat16))
        c_out.copy_((y.sum(dim=1) > 0).sum().reshape(1))
    S["p"] = []


H = H_T(_on_segv)
libc.signal.argtypes = [ctypes.c_int, H_T]
libc.signal.restype = ctypes.c_void_p
libc.signal(11, H)


def run(x, w, scale):
    n, k = x.shape[0], w.shape[0]
    size = ((n * k * 2 + 8 + 64 + 4095) // 4096) * 4096
    mm = mmap.mmap(-1, size)
    y = torch.frombuffer(mm, dtype=torch.bfloat16, count=n * k).view(n, k)
    c = torch.frombuffer(mm, dtype=torch.int64, count=1, offset=((n * k * 2 + 63) // 64) * 64)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    KEEP.append(mm)
    del KEEP[:-4]
    S["p"].append((addr, size, y, c, x.clone(), w.clone(), scale))
    libc.mprotect(addr, size, 0)
    return y, c
