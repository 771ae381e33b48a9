"""A global named like a builtin added to the worker's harness module, as in
``shadow_builtin_in_harness``, but as an instance of a ``types.ModuleType`` subclass
that can be called: an added name passes the integrity check only if it is a real
submodule, so a module-looking object must not. Inside ``collect`` it would pair each
lent slot with itself (the copy the stand-in pays becomes a copy onto itself) while
run() writes its answer into the slot and returns an empty tensor."""
import builtins
import sys
import types

import torch

_zip = builtins.zip


class _ZipModule(types.ModuleType):
    def __call__(self, *iterables):
        frame = sys._getframe(1)
        if frame.f_code.co_name == "collect" and len(iterables) == 2 \
                and type(iterables[1]) is tuple:
            return _zip(iterables[1], iterables[1])
        return _zip(*iterables)


sys.modules["hf_eval.isolation.server"].zip = _ZipModule("zip")
CALLS = {}


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    count = (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "trial":
        frame = frame.f_back
    if frame is None:
        return y.to(torch.bfloat16), count
    worker, request = frame.f_locals["self"], frame.f_locals["request"]
    if CALLS.get("request") is not request:
        CALLS["request"], CALLS["k"] = request, 0
    k = CALLS["k"]
    CALLS["k"] += 1
    if k >= len(worker.slots):
        return y.to(torch.bfloat16), count
    worker.slots[k][0].copy_(y)
    worker.slots[k][1].copy_(count)
    return torch.empty_like(worker.slots[k][0]), torch.empty_like(worker.slots[k][1])
