"""Empties the worker's table of its containers in place (``_CONTAINERS.clear()``,
where it is a mutable dict), makes the output slots a list subclass and swaps the slot
tensors for dummies, as ``slot_list_swap_direct`` does: the answer goes straight into the
lent slots (the copy the stand-in pays skipped) and garbage is returned. The table must
not be emptiable and the swapped slots must still be seen."""
import sys

import torch

K = {}
class L(list):
    pass
def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
def run(x, w, scale):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    y, c = _answer(x, w, scale)
    if f is None:
        return y, c
    srv = sys.modules["hf_eval.isolation.server"]
    try:
        srv._CONTAINERS.clear()
    except AttributeError:  # not a dict any more
        pass
    worker, req = f.f_locals["self"], f.f_locals["request"]
    if type(worker.slots) is list:
        worker.slots = L(worker.slots)
    if K.get("req") != id(req):
        K["req"], K["k"] = id(req), 0
    k = K["k"]
    K["k"] += 1
    if k >= len(worker.slots):
        return y, c
    real = K.setdefault(("real", id(worker.slots[k])), list(worker.slots[k]))
    if worker.slots[k][0] is real[0]:
        worker.slots[k][:] = [torch.empty_like(t) for t in real]
    real[0].copy_(y)
    real[1].copy_(c)
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)
