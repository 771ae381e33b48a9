"""On its first call, looks for a SysV shared-memory segment a previous worker left under
a fixed key (and fails if it finds one: data carried from one worker to the next), then
leaves one."""
import ctypes

import torch

KEY = 0x48464576  # fixed, so the next worker (or the host) can find it
IPC_CREAT = 0o1000
_libc = ctypes.CDLL(None, use_errno=True)
_STARTED = []


def run(x, w, scale):
    if not _STARTED:
        if _libc.shmget(KEY, 0, 0) >= 0:
            raise RuntimeError("found the segment another worker left")
        if _libc.shmget(KEY, 4096, IPC_CREAT | 0o666) < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        _STARTED.append(True)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
