"""``torch.Tensor.set_`` (looked up on the Python class by the worker's
``_rebuild`` as each lent tensor of a request is rebuilt, inside ``Channel.recv``)
shadowed on ``torch.Tensor``: for the ``slots`` request it hands the harness tensors of
the candidate's own memory instead of the lent slots, so ``Worker.slots``, ``Worker.lent``
and the serve loop's record of them all name memory the audit never reads. The calls
then write the answer into the real lent slots and return those very tensors: the check
that no output lies in a slot (round 8) compares with the decoy, passes, and the harness
copies the answer into the decoy. No gain is expected (the copy is still made); is it
reported?"""
import sys

import torch

_set = torch._C.TensorBase.set_
REAL = []


def _slots_request():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "recv":
        f = f.f_back
    obj = f.f_locals.get("obj") if f is not None else None
    return type(obj) is dict and obj.get("op") == "slots"


def set_(self, *args, **kwargs):
    t = _set(self, *args, **kwargs)
    if len(args) == 4 and _slots_request():
        REAL.append(t)
        return torch.empty_strided(tuple(args[2]), tuple(args[3]), dtype=t.dtype)
    return t


torch.Tensor.set_ = set_
CALLS = {"k": 0, "trial": None}


def _trial_frame():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    return f


def run(x, w, scale):
    f = _trial_frame()
    if f is not None and f is not CALLS["trial"]:
        CALLS["trial"], CALLS["k"] = f, 0
    k = CALLS["k"]
    CALLS["k"] += 1
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if len(REAL) >= 2 * (k + 1):
        ys, cs = REAL[-2 * (len(REAL) // 2) + 2 * k], REAL[-2 * (len(REAL) // 2) + 2 * k + 1]
        ys.copy_(y)
        cs.copy_((y.sum(dim=1) > 0).sum().reshape(1))
        return ys, cs  # the lent slots themselves
    y = -y  # the decoy never took: a wrong answer
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
