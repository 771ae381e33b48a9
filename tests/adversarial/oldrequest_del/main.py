"""No thread, no ctypes, no class swap. The candidate puts an object with a
``__del__`` into the request dict the serve loop holds (``serve``'s ``request`` local,
read from the frame). That dict is freed when the loop rebinds ``request`` to the NEXT
message (``request = recv(...)``): the finalizer runs after the next request is built and
before the loop reads its ``op`` or calls its handler, and rewrites it in place (trial:
``unmask`` dropped, ``flush`` 0), and plants itself in it again, so the chain runs through
every later message, checks or no checks (no check looks at a request). The candidate
reveals the arena itself; a trial after the chain started that still carries ``unmask``
gets a wrong answer."""
import sys as _sys

import torch

from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0, "trials": 0, "ops": []}
PENDING = {}
STATE = {"armed": False}
KEY = "planted"


def _serve_frame(depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def on_request(req):  # variant hook
    if req.get("op") == "trial":
        LOG["trials"] += 1
        if req.get("unmask"):
            PENDING.update(req["unmask"])
            req["unmask"] = None
        req["flush"] = 0


class _Bomb:
    def __del__(self):
        try:
            f = _serve_frame(1)
            loc = f.f_locals if f is not None else {}
            new = loc.get("request")
            loc.clear()  # the frame's locals snapshot would keep the dict alive
            if type(new) is dict and KEY not in new:
                LOG["fired"] += 1
                LOG["ops"].append(new.get("op"))
                on_request(new)
                new[KEY] = _Bomb()
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


def run(x, w, scale):
    sf = _serve_frame(1)
    loc = sf.f_locals
    req, worker = loc.get("request"), loc.get("self")
    loc.clear()
    if type(req) is dict and req.get("unmask") and STATE["armed"]:
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = worker.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    if type(req) is dict and KEY not in req:
        req[KEY] = _Bomb()
    STATE["armed"] = True
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
