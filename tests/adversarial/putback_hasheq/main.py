"""A key of the candidate's class in the server module's namespace, hashed like
one of its names: ``_put_back``'s ``n not in names`` runs its ``__eq__`` right before
the trial reply's send, reply in hand. It answers True (so it is never "added", and no
RENAMED report), and rewrites the reply (every output "in its slot"). Expected HELD:
``checked``'s integrity check reports a name that is not a str."""
import sys as _sys

import torch

import hf_eval.isolation.server as _srv

STATE = {"req": None, "k": 0, "forged": 0}


class _Key:
    def __hash__(self):
        return hash("_put_back")

    def __eq__(self, other):
        f = _sys._getframe(1)
        if f.f_code.co_name != "<listcomp>":
            return False
        s = f
        while s is not None and s.f_code.co_name != "serve":
            s = s.f_back
        if s is not None:
            reply = s.f_locals.get("reply")
            if type(reply) is dict and "outputs" in reply and "event_ms" in reply:
                reply["outputs"] = [[None] * 2 for _ in reply["outputs"]]
                STATE["forged"] += 1
        return True


def run(x, w, scale):
    f = _sys._getframe(1)
    while f.f_code.co_name != "serve":
        f = f.f_back
    loc = f.f_locals
    req, worker = loc.get("request"), loc.get("self")
    del loc
    if req is not STATE["req"]:
        STATE["req"], STATE["k"] = req, 0
    k = STATE["k"]
    STATE["k"] += 1
    vars(_srv)[_Key()] = 1
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    slot = worker.slots[k]
    slot[0].copy_(y.to(torch.bfloat16))
    slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    return torch.zeros(1, dtype=torch.bfloat16), torch.zeros(2, dtype=torch.int64)
