"""Writes 64 MiB of garbage into the channel (a header announcing it, then bytes that are
no pickle) before the real reply."""
import gc
import struct

import torch


def run(x, w, scale):
    gc.unfreeze()
    size = 64 << 20
    for obj in gc.get_objects():
        if type(obj).__name__ == "Channel" and hasattr(obj, "sock"):
            obj.sock.sendall(struct.pack("<QI", size, 0) + b"\xff" * size)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
