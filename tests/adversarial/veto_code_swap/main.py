"""audit_hook_slot_swap, after emptying the worker's own audit hook (the one that vetoes
every later hook) by giving it another code object for a moment: the hook added then
would swap the slot lists for dummies inside collect (so the harness copies the garbage
run() returns there, while the real slots keep the answer run() wrote itself) and put
them back, with the worker's record of them, in the serve loop. The code swap is
refused, so no hook is added and the garbage is what the audit judges."""
import sys

import torch

K = {"armed": False, "saved": None}
BUSY = [0]
def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
def hook(event, args):
    if BUSY[0] or event != "sys.setprofile":
        return
    BUSY[0] = 1
    try:
        f = sys._getframe(1)
        names = []
        while f is not None:
            names.append(f.f_code.co_name)
            if f.f_code.co_name in ("collect", "serve"):
                break
            f = f.f_back
        if f is None:
            return
        if f.f_code.co_name == "collect" and K["armed"] and K["saved"] is None:
            worker = f.f_locals["self"]
            K["saved"] = [(s, list(s)) for s in worker.slots]
            for s in worker.slots:
                s[:] = [torch.empty_like(t) for t in s]
            K["lent"] = worker.lent
            worker.lent = tuple((t.data_ptr(), t.nbytes) for s in worker.slots for t in s)
            K["armed"] = False
        elif f.f_code.co_name == "serve" and K["saved"] is not None:
            for s, orig in K["saved"]:
                s[:] = orig
            f.f_locals["self"].lent = K["lent"]
            K["saved"] = None
    finally:
        BUSY[0] = 0
# The veto is a plain Python function: give it a no-op body for one call, add our
# hook, give the body back (the integrity snapshot then sees the original code again).
_srv = sys.modules["hf_eval.isolation.server"]
_veto = _srv._refuse_audit_hooks
_orig_code = _veto.__code__
try:
    _veto.__code__ = (lambda event, args: None).__code__
    try:
        sys.addaudithook(hook)
    finally:
        _veto.__code__ = _orig_code
except RuntimeError:
    pass
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
    worker.slots[k][0].copy_(y)
    worker.slots[k][1].copy_(c)
    K["armed"] = True
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)
