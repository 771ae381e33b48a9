"""No thread, no ctypes, no signal, no profile, nothing left rebound. ``_put_back`` (the
put-back run right after the calls, and before every receive and send) calls ``len``,
``type`` and ``str`` from ``builtins`` as it runs, and puts ``builtins`` back only as the
8th of its namespaces: a ``builtins.len`` of the candidate's runs at its very first line.
The candidate's call rebinds ``builtins.len``; in the put-back after the calls (``trial``'s
``_put``) the hook writes the right answers into the outputs the calls returned (zeros)
and puts the real ``len`` back itself, so the put-back finds ``builtins`` unchanged.
WRONG unless the hook ran inside the put-back."""
import builtins
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}
_LEN = builtins.len


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _hook(obj):
    builtins.len = _LEN  # gone before the put-back reaches builtins
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "_put_back" and f.f_back.f_code.co_name == "trial":
            loc = f.f_back.f_locals
            worker, results, ids = loc["self"], loc.get("results"), loc.get("ids")
            for set_id, outs in zip(ids, results):
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _LEN(obj)


def run(x, w, scale):
    builtins.len = _hook
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
