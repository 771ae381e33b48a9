"""The interpreter's pending-call queue reached without looking its name up through
ctypes: the C library's own ``dlsym`` (called through ctypes) finds the address, and a
ctypes function made at that address queues a callback that would fill the outputs the
calls left as zeros, inside the harness's steps. Refused at the lookup of ``dlsym``."""
import ctypes

import torch

CB_T = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
libc = ctypes.CDLL(None)
libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
libc.dlsym.restype = ctypes.c_void_p
ADDRESS = libc.dlsym(None, b"Py_AddPendingCall")
ADD = ctypes.CFUNCTYPE(ctypes.c_int, CB_T, ctypes.c_void_p)(ADDRESS)
TODO = []


def _fill(_arg):
    for y_out, c_out, x, w, scale in TODO:
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        y_out.copy_(y.to(torch.bfloat16))
        c_out.copy_((y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    TODO.clear()
    return 0


CB = CB_T(_fill)


def run(x, w, scale):
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    TODO.append((y, c, x, w, scale))
    ADD(CB, None)
    return y, c
