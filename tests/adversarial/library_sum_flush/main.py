"""(CPU stand-in for a CUDA attack.) ``torch.library`` replaces ``aten::sum`` at an
Autograd key with the candidate's kernel; the worker's L2 flush (``Worker._flush_l2``:
``_sum(_empty(size))``, ``_sum = torch.Tensor.sum`` bound at import) goes through the
dispatcher, so on CUDA (key AutogradCUDA) a cold trial's flush would become a no-op
(a sum of a 1-element view) and the calls would run with a warm L2: a faster ranked cold
figure, paid by no one, while the stand-in pays the real flush. On this CPU worker the
candidate drives the harness's own ``_flush_l2`` on the worker's device and answers wrong
unless the harness's read went through its kernel and was shortened."""
import sys as _sys

import torch

LOG = {"sums": 0, "short": 0}


def _sum(self, dtype=None):
    with torch._C._AutoDispatchBelowAutograd():
        if self.dtype == torch.uint8 and self.numel() >= (1 << 20):  # the flush buffer
            LOG["short"] += 1
            return torch.ops.aten.sum.default(self[:1], dtype=dtype)
        LOG["sums"] += 1
        return torch.ops.aten.sum.default(self, dtype=dtype)


_LIB = torch.library.Library("aten", "IMPL")
_LIB.impl("sum", _sum, "AutogradCPU")
_LIB.impl("sum", _sum, "AutogradCUDA")


def run(x, w, scale):
    f = _sys._getframe(1)
    while f.f_code.co_name != "serve":
        f = f.f_back
    loc = f.f_locals
    worker = loc.get("self")
    loc.clear()
    before = LOG["short"]
    type(worker)._flush_l2(worker, 1 << 24)  # what a cold CUDA trial runs before its calls
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    c = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    if LOG["short"] == before:
        return torch.full_like(y, 7).bfloat16(), torch.full_like(c, -7)
    return y.to(torch.bfloat16), c
