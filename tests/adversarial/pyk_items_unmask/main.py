"""No thread, no ctypes, no signal, no profile. ``_kernels_replaced`` reads an operator's
Python kernels as ``vars(overload)["py_kernels"].items()``: the candidate puts a dict
subclass (same contents) there for ``aten::random_.from``, whose ``items`` answers the
original pairs, so no check sees a change. ``trial`` runs that check BEFORE it reads its
request's fields: the hook drops ``unmask`` (and ``flush``) from the request in hand. The
candidate unmasks the arena itself in its call. Wrong unless the hook dropped the reveal
(a call that still sees ``unmask`` in its request returns zeros)."""
import sys as _sys

import torch

from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0}
PENDING = {}


class _Items(dict):
    def items(self):
        try:
            f = _sys._getframe(1)
            names = []
            g = f
            for _ in range(4):
                if g is None:
                    break
                names.append(g.f_code.co_name)
                g = g.f_back
            if names[:3] == ["_python_kernels", "_kernels_replaced", "trial"]:
                tf = f.f_back.f_back
                req = tf.f_locals.get("request")
                if type(req) is dict and req.get("unmask"):
                    PENDING.update(req["unmask"])
                    req["unmask"] = None
                    req["flush"] = 0
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return dict.items(self)


_OV = getattr(torch.ops.aten.random_, "from")
_OV.py_kernels = _Items(vars(_OV)["py_kernels"])


def _serve_frame(depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    sf = _serve_frame(1)
    loc = sf.f_locals
    req, worker = loc.get("request"), loc.get("self")
    loc.clear()
    if type(req) is dict and req.get("unmask"):  # the harness revealed: hook failed
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = worker.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
