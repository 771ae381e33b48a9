"""Maps the weight's memfd again, writable and shared, to poison it for the audit and for
the candidates after it (the seal refuses the mapping)."""
import mmap
import os

import torch


def run(x, w, scale):
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("/memfd:") and os.fstat(int(name)).st_size >= w.numel() * 2:
            buffer = mmap.mmap(int(name), 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            buffer[:16] = b"\0" * 16
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
