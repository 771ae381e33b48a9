"""No thread, no ctypes, no profile. ``memory._frombuffer`` maps every received buffer under
``warnings.catch_warnings()``; the class is bound at import, but its ``__enter__`` is
looked up on the class as it runs. The class's namespace is in the snapshot (compared
after a non-trial request) and NOT in the put-back before each receive, so an
``__enter__`` of the candidate's that puts the original back when it runs executes inside
``recv``, while the request's tensors are being rebuilt, unreported. Here it replaces
``memory._torch_frombuffer`` for one buffer and puts it back in ``__exit__`` (so the
put-back finds nothing): the worker's view of a lent output slot is then a private
buffer of the candidate's, the slot record (``lent``) is taken from it and agrees. WRONG
(the audit's slots stay zero) unless the hook ran inside recv; the point shown is code of
the candidate's inside the receive path, which no check reports."""
import sys as _sys
import warnings

import torch

import hf_eval.data.memory as memory

LOG = {"fired": 0, "err": None}
_ENTER, _EXIT = warnings.catch_warnings.__enter__, warnings.catch_warnings.__exit__
_FROM = memory._torch_frombuffer


def _enter(self):
    warnings.catch_warnings.__enter__ = _ENTER
    try:
        f = _sys._getframe(1)
        callers = [f.f_back, f.f_back.f_back, f.f_back.f_back.f_back]
        if f.f_code.co_name == "_frombuffer" and any(
                g.f_code.co_name in ("recv", "_receive") for g in callers if g):
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ENTER(self)


warnings.catch_warnings.__enter__ = _enter


def run(x, w, scale):
    # re-armed each call: the next receive of a request that carries a buffer runs it
    warnings.catch_warnings.__enter__ = _enter
    if LOG["fired"]:  # proof that the hook ran inside recv: the right answer
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
