"""Changes the class of the ``json`` module to a ``ModuleType`` subclass (its names
unchanged, so a snapshot of them sees nothing) and replaces ``builtins.zip`` (reported at
every request): where the channel looked ``json.dumps`` up at each send, after every
check, the subclass's ``__getattribute__`` rewrote the integrity error into the reply
the request would have had. What a reply goes out through must be bound before any
candidate code."""
import builtins
import json
import sys
import types

import torch


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
srv = sys.modules["hf_eval.isolation.server"]
_f = sys._getframe(0)
while _f is not None and not (_f.f_code.co_name == "load"
                              and type(_f.f_locals.get("self")) is srv.Worker):
    _f = _f.f_back
WORKER = _f.f_locals["self"] if _f is not None else None
def _collect(request):
    n = len(WORKER.produced)
    WORKER.produced = []
    return {"outputs": [[None] * request["n_outputs"] for _ in range(n)]}
_zip = builtins.zip
def _evilzip(*a):
    if sys._getframe(1).f_code.co_name == "collect":
        return _zip(a[1], a[1])
    return _zip(*a)
def _frame(name, start=1):
    f = sys._getframe(start + 1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f
K = {}
def run(x, w, scale):
    y, c = _answer(x, w, scale)
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is None or WORKER is None:
        return y, c
    req = f.f_locals["request"]
    if K.get("req") != id(req):
        K["req"], K["k"] = id(req), 0
    k = K["k"]
    K["k"] += 1
    if k < len(WORKER.slots):
        WORKER.slots[k][0].copy_(y)
        WORKER.slots[k][1].copy_(c)
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)
STATS = {"forged": 0}
class EvilMod(types.ModuleType):
    def __getattribute__(self, name):
        if name == "dumps":
            f = sys._getframe(1)
            if f.f_code.co_name == "send":
                obj = f.f_locals.get("obj")
                s = _frame("serve", 1)
                if type(obj) is dict and s is not None \
                        and str(obj.get("error", "")).startswith("harness integrity"):
                    req = s.f_locals["request"]
                    op = req["op"]
                    new = {"ok": True}
                    if op == "trial":
                        new["outputs"] = [[None] * req["n_outputs"] for _ in req["ids"]]
                        new["event_ms"] = 0.1
                        new["phases_ms"] = {"inputs": 0.01, "calls": 0.1,
                                            "outputs": 0.01}
                    elif op in ("load", "null"):
                        new["walls"] = list(WORKER.walls)
                        if op == "load":
                            new["prepare"] = False
                    elif op == "slots":
                        new["pinned"] = 0
                    elif op == "changed":
                        new["changed"] = []
                    new["nonce"] = obj["nonce"]
                    obj.clear()
                    obj.update(new)
                    STATS["forged"] += 1
        return types.ModuleType.__getattribute__(self, name)
if WORKER is not None:
    json.__class__ = EvilMod
    builtins.zip = _evilzip
