"""The trial request rewritten before ``trial`` reads it. ``trial`` calls
``_kernels_replaced(_OPS_BEFORE_CALLS)`` before it reads the request's fields ("before any
candidate code"), and that reads ``aten::sum``'s Python-kernel table with
``dict.get(namespace, "py_kernels")`` on the operator's own ``__dict__``, whose keys nobody
checks. At import the candidate puts a key of its own class, hashed like ``"py_kernels"``,
into ``torch.ops.aten.sum.default.__dict__`` ahead of the real entry. At every trial's
start its ``__eq__`` takes the trial's ``request`` from the frame and drops ``unmask`` (and
sets ``flush`` to 0: on CUDA a cold trial's L2 flush skipped, by reading). On the CPU the
candidate then reveals the arena itself in its first call, with the seed it kept: PASSED
only if the harness's reveal was dropped (a second XOR masks the content again)."""
import sys as _sys

import torch

from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0, "err": None}
PENDING = {}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _K:
    def __hash__(self):
        return hash("py_kernels")

    def __eq__(self, other):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name not in ("trial", "collect"):
                f = f.f_back
            if f is not None and f.f_code.co_name == "trial":
                loc = f.f_locals
                request = loc["request"]
                if "t0" not in loc and type(request.get("unmask")) is dict:
                    PENDING["u"] = (loc["self"], request["unmask"]["arena"],
                                    request["unmask"]["seed"])
                    request["unmask"] = None
                    request["flush"] = 0
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


_NS = torch.ops.aten.sum.default.__dict__
_T = _NS.pop("py_kernels")
_NS[_K()] = None
_NS["py_kernels"] = _T


def run(x, w, scale):
    pending = PENDING.pop("u", None)
    if pending is not None:
        worker, arena_id, seed = pending
        unmask_words(vars(worker.arenas[arena_id])["words"], seed)
    return _answer(x, w, scale)
