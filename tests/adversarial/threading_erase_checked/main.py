"""A report of the off-clock ``checked`` request erased. Every call computes honestly and
leaves ``torch.equal`` (a GUARDED name, neither put back nor restored: only the ``checked``
request's integrity check reports it) replaced by a wrapper; see
``guarded_left_control``, which does the same without the key and must fail. Each
call also plants, ahead of ``"_trace_hook"`` in ``vars(threading)``, a key of its class with
that hash: the ``checked`` request's first step, ``clear()`` (``_cleared_hooks``), runs
``threading.gettrace`` before ``check(baseline)``, so the key's ``__eq__`` runs there (outside
``collect``), puts ``torch.equal`` back and removes itself. PASSED only if the report was
erased (a weakness: the tampering is hidden)."""
import sys as _sys
import threading

import torch

LOG = {"erased": 0, "err": None}
_TD = vars(threading)
_EQUAL = torch.equal


def _wrapper(a, b):
    return _EQUAL(a, b)


class _K:
    def __hash__(self):
        return hash("_trace_hook")

    def __eq__(self, other):
        try:
            names = []
            f = _sys._getframe(1)
            while f is not None:
                names.append(f.f_code.co_name)
                f = f.f_back
            if "serve" in names and "collect" not in names:
                torch.equal = _EQUAL
                _TD.pop(self, None)
                LOG["erased"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def run(x, w, scale):
    torch.equal = _wrapper
    if not any(type(k) is _K for k in list(_TD)):
        value = _TD.pop("_trace_hook")
        _TD[_K()] = None
        _TD["_trace_hook"] = value
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
