"""Probe: a Python backend fallback on PrivateUse1 (torch.library .fallback) with
PrivateUse1 left in the main thread's TLS include set from import on. Every CPU operator
without a PrivateUse1 kernel then runs the candidate's Python first. Counts the operators
it saw while no call of the candidate ran (the harness's own handlers), and reports them
through the 4th call's exception text; earlier calls are honest."""
import torch
from torch._C import DispatchKey as K

_CPU = torch._C.DispatchKeySet(K.CPU)
S = {"in_run": False, "outside": {}, "n": 0}
def _fb(keyset, op, *args, **kw):
    if not S["in_run"]:
        k = str(op)
        S["outside"][k] = S["outside"].get(k, 0) + 1
    return op.redispatch(_CPU, *args, **kw)
_LIB = torch.library.Library("_", "IMPL")
_LIB.fallback(_fb, "PrivateUse1", with_keyset=True)
torch._C._dispatch_tls_set_dispatch_key_included(K.PrivateUse1, True)
def run(x, w, scale):
    S["in_run"] = True
    try:
        S["n"] += 1
        if S["n"] == 4:
            raise RuntimeError("SEEN-OUTSIDE-RUN " + repr(sorted(S["outside"].items())))
        y = torch.nn.functional.linear(x.float(), w.float()) * torch.tensor(float(scale))
        return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    finally:
        S["in_run"] = False
