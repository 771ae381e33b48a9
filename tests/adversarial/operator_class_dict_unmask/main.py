"""The route of operator_class_dict_collect, at the other check: ``trial`` runs
``_kernels_replaced(_OPS_BEFORE_CALLS)`` BEFORE it reads its request's fields, and that reads
``object.__getattribute__(overload, "__dict__")`` of ``aten::random_.from``, whose class the
candidate swapped for a subclass with a ``__dict__`` property. The property drops the
request's ``unmask`` (the reveal) and ``flush`` (on CUDA the cold trial's L2 eviction: a
warm ranked "cold" figure) from the request in hand; the candidate unmasks in its call.
WRONG unless the request was rewritten (a call that still sees ``unmask`` returns zeros)."""
import sys as _sys

import torch

from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0, "err": None}
PENDING = {}
_OV = getattr(torch.ops.aten.random_, "from")
_REAL = next(vars(c)["__dict__"] for c in type(_OV).__mro__ if "__dict__" in vars(c))


class _Overload(type(_OV)):
    @property
    def __dict__(self):
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "_python_kernels" and f.f_back.f_back.f_code.co_name == "trial":
                req = f.f_back.f_back.f_locals.get("request")
                if type(req) is dict and req.get("unmask"):
                    PENDING.update(req["unmask"])
                    req["unmask"] = None
                    req["flush"] = 0
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return _REAL.__get__(self)


_OV.__class__ = _Overload


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    loc = _serve_frame().f_locals
    req, worker = loc["request"], loc["self"]
    if type(req) is dict and req.get("unmask"):
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = worker.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
