"""Three reaches out of the worker: a pressure trigger (``/proc/pressure/cpu`` is writable
by every user; each open file may hang a trigger on the host's root pressure group, whose
teardown waits for an RCU grace period a trigger, so hundreds of thousands of them keep a
killed worker alive for minutes), ``mseal`` (fixing mappings in place, the harness's
too) and ``sched_setattr`` (utilisation clamps that raise the clock of the candidate's
cores where the host scales frequencies). Raises, naming them, only if all three are
refused; if any is taken it returns the right answer (and would PASS)."""
import ctypes
import mmap
import os

import torch

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
MSEAL, SCHED_SETATTR = 462, 314  # x86_64


class _SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32),
                ("flags", ctypes.c_uint64), ("nice", ctypes.c_int32),
                ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64),
                ("util_min", ctypes.c_uint32), ("util_max", ctypes.c_uint32)]


def _raw(number, *args):
    return os.strerror(ctypes.get_errno()) if _libc.syscall(number, *args) < 0 else None


def _trigger():
    try:
        with open("/proc/pressure/cpu", "w") as fh:
            fh.write("some 500000 2000000")
    except OSError as exc:
        return os.strerror(exc.errno)
    return None


def run(x, w, scale):
    region = mmap.mmap(-1, 4096)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    clamp = _SchedAttr(size=ctypes.sizeof(_SchedAttr), flags=0x60 | 0x8,  # UTIL_CLAMP, KEEP
                       util_min=1024, util_max=1024)
    refused = {"pressure": _trigger(),
               "mseal": _raw(MSEAL, ctypes.c_void_p(address), ctypes.c_size_t(4096), 0),
               "sched_setattr": _raw(SCHED_SETATTR, 0, ctypes.byref(clamp), 0)}
    if all(refused.values()):
        raise PermissionError(", ".join(f"{name}: {why}" for name, why in refused.items()))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
