"""Hides an instance attribute that shadows the worker's ``collect``: where the state
check's list of the class's method names is a cache, it is rebuilt for a moment without
``collect`` (the very method put back after). Then ``worker.collect`` runs instead of the
harness's: no output check, no copy; run() writes its answer straight into the lent slots
and returns garbage. The method names must be fixed before any candidate code runs."""
import sys

import torch


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)

srv = sys.modules["hf_eval.isolation.server"]
W = srv.Worker
_f = sys._getframe(0)
while _f is not None and not (_f.f_code.co_name == "load" and type(_f.f_locals.get("self")) is W):
    _f = _f.f_back
WORKER = _f.f_locals["self"] if _f is not None else None
_orig = W.__dict__["collect"]
names = getattr(srv, "_class_names", None)  # a cache of the class's names, where there is one
if names is not None:
    names.cache_clear()
    delattr(W, "collect")
    names(W)  # cached without "collect"
    W.collect = _orig
STATS = {"evil": 0}

def _collect(request):
    STATS["evil"] += 1
    n = len(WORKER.produced)
    WORKER.produced = []
    return {"outputs": [[None] * request["n_outputs"] for _ in range(n)]}

if WORKER is not None:
    WORKER.collect = _collect
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
