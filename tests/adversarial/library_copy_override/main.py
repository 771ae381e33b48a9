"""No thread, no ctypes, no signal, no global rebound, no mode. ``torch.library`` puts a
Python kernel of the candidate's on ``aten::copy_`` at the AutogradCPU key (every other
copy is passed below autograd to torch's own kernel). The harness's output copy in
``collect`` (``_copy``: TensorBase.copy_, bound at import) goes through the dispatcher,
so candidate code runs inside ``collect``, after the worker's clock and the state check.
The calls return uninitialised tensors of the right shape and do no work; the kernel
computes each answer straight into the slot. On CUDA the same registration on
``aten::sum`` (the L2 flush, ``_sum``) or ``aten::fill_`` (the CUPTI marker) would run
there too. PASSED only if the override ran in the harness's copy."""
import torch

PENDING = {}
LOG = {"hits": 0}


def _copy_(dst, src, non_blocking=False):
    job = PENDING.pop(src.data_ptr(), None) if src.numel() else None
    if job is not None:
        LOG["hits"] += 1
        x, w, scale, which = job
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        val = y.to(torch.bfloat16) if which == 0 else (y.sum(dim=1) > 0).sum().reshape(1)
        with torch._C._AutoDispatchBelowAutograd():
            return torch.ops.aten.copy_.default(dst, val, non_blocking)
    with torch._C._AutoDispatchBelowAutograd():
        return torch.ops.aten.copy_.default(dst, src, non_blocking)


_LIB = torch.library.Library("aten", "IMPL")
_LIB.impl("copy_", _copy_, "AutogradCPU")


def run(x, w, scale):
    y = torch.empty(x.shape[0], w.shape[0], dtype=torch.bfloat16).fill_(7)
    c = torch.full((1,), -7, dtype=torch.int64)
    PENDING[y.data_ptr()] = (x, w, scale, 0)
    PENDING[c.data_ptr()] = (x, w, scale, 1)
    return y, c
