"""``torch.UntypedStorage.data_ptr`` shadowed on the Python class, answering a false
address inside the worker's overlap check, so that an output that is the lent slot
itself (written with the answer) would pass the "lies in the output slots" check and be
copied onto itself. The worker reads addresses through the C type's own accessors, and
the class attribute is harness state."""
import sys

import torch

_original = torch._C.StorageBase.data_ptr
FAKE = [1 << 56]
STATE = {}


def data_ptr(self):
    frame = sys._getframe(1)
    if frame.f_code.co_name == "_span":
        FAKE[0] += 1 << 32
        return FAKE[0]
    return _original(self)


torch.UntypedStorage.data_ptr = data_ptr


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    count = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "trial":
        frame = frame.f_back
    if frame is None:
        return y.to(torch.bfloat16), count
    worker, request = frame.f_locals["self"], frame.f_locals["request"]
    if STATE.get("request") is not request:
        STATE["request"], STATE["k"] = request, 0
    k = STATE["k"]
    STATE["k"] += 1
    if k >= len(worker.slots):
        return y.to(torch.bfloat16), count
    a, b = worker.slots[k]
    a.copy_(y)
    b.copy_(count)
    return a, b
