"""Opens the kernel's BTF (``/sys/kernel/btf/vmlinux``, world-readable) to map a page of it
and close the descriptor: the mapping keeps the sysfs file open, with a structure no
cgroup charges, so a worker could hold millions of them at a few descriptors a process.
The rest of ``/sys`` stays readable (torch and CUDA read it). Raises, naming both, only if
the BTF is refused and ``/sys`` still read; else it returns the right answer (and would
PASS)."""
import mmap
import os

import torch


def run(x, w, scale):
    try:
        fd = os.open("/sys/kernel/btf/vmlinux", os.O_RDONLY)
    except OSError as exc:
        btf = os.strerror(exc.errno)
    else:
        mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
        os.close(fd)
        btf = None
    with open("/sys/devices/system/cpu/online") as fh:
        online = "readable" if fh.read().strip() else None
    if btf and online:
        raise PermissionError(f"btf: {btf}, cpu online: {online}")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
