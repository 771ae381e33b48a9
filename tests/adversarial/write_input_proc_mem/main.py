"""Writes an input through /proc/self/mem, which ignores page protections for private
mappings (the lent inputs are shared and sealed: the kernel refuses)."""
import torch


def run(x, w, scale):
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(w.data_ptr())
        mem.write(b"\0" * 16)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
