"""A REPLY rewritten in place, no thread. The request chain of oldrequest_del
(a ``__del__`` in the request dict the serve loop frees when it rebinds ``request``) also
plants an object in the serve loop's previous ``reply`` dict, which is freed when the loop
rebinds ``reply`` to the new one: after the handler, before ``send``. Trial requests get
``n_outputs`` 99 (``collect`` copies nothing); the candidate writes its outputs into the
lent slots itself inside its call and returns 1-element dummies; the reply finalizer
marks every output "in its slot". A trial whose rewrite missed is INCORRECT_SHAPE."""
import sys as _sys

import torch

LOG = {"req": 0, "rep": 0}
STATE = {"armed": False, "n": 2, "call": 0}
KEY = "planted"


def _serve_frame(depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def _locals(f):
    loc = f.f_locals
    out = dict(loc)
    loc.clear()  # the frame's snapshot would keep the dicts alive
    return out


class _ReplyBomb:
    def __init__(self, op):
        self.op = op

    def __del__(self):
        try:
            loc = _locals(_serve_frame(1))
            rep, req = loc.get("reply"), loc.get("request")
            if type(req) is dict and req.get("op") == "trial" and type(rep) is dict \
                    and rep.get("ok") and type(rep.get("outputs")) is list:
                LOG["rep"] += 1
                rep["outputs"] = [[None] * STATE["n"] for _ in rep["outputs"]]
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


class _Bomb:
    def __del__(self):
        try:
            loc = _locals(_serve_frame(1))
            new, rep = loc.get("request"), loc.get("reply")
            if type(new) is dict and KEY not in new:
                LOG["req"] += 1
                if new.get("op") == "trial":
                    STATE["n"] = new.get("n_outputs", 2)
                    new["n_outputs"] = 99
                    new["rewritten"] = True
                    STATE["call"] = 0
                new[KEY] = _Bomb()
                if type(rep) is dict:
                    rep["rb"] = _ReplyBomb(new.get("op"))
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


def run(x, w, scale):
    loc = _locals(_serve_frame(1))
    req, worker = loc.get("request"), loc.get("self")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if type(req) is dict and KEY not in req:
        req[KEY] = _Bomb()
    if type(req) is dict and req.get("rewritten"):
        slot = worker.slots[STATE["call"]]
        STATE["call"] += 1
        slot[0].copy_(y)  # converted straight into the lent slot: no copy of ours after
        slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1))
        return torch.empty(1, dtype=torch.bfloat16), torch.empty(1, dtype=torch.int64)
    if STATE["armed"]:
        return torch.empty(1, dtype=torch.bfloat16), torch.empty(1, dtype=torch.int64)
    STATE["armed"] = True
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
