"""Variant of keyset_rebind through the third global ``_dispatch_keys`` reads,
``_local_exclude_set`` (a torch C function bound at import, rebound by name here). No
thread, no ctypes, no odd key. ``trial`` binds ``keys_now = _dispatch_keys`` as a local
and calls it right after the calls, *before* ``_put`` (the put-back of the message
path's names). But ``_dispatch_keys`` itself reads the server module's globals
``_local_exclude_set``, ``_local_include_set`` and ``_local_exclude_set`` by name. The
candidate's call rebinds ``server._local_exclude_set`` to its own function; at
``keys_now()`` it puts the original back (so the put-back that follows finds nothing
changed), writes the right answers into the zero outputs the calls returned (found in
``trial``'s frame: ``results``), and returns the original's value. WRONG unless the
rebound name ran."""
import sys as _sys

import torch
from lent_kit import answer as _answer

LOG = {"fired": 0, "err": None}
_SD = vars(_sys.modules["hf_eval.isolation.server"])
_ORIG = _SD["_local_exclude_set"]


def _hook():
    _SD["_local_exclude_set"] = _ORIG
    try:
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "trial":
            f = f.f_back
        if f is not None:
            worker, ids, results = f.f_locals["self"], f.f_locals["ids"], f.f_locals["results"]
            for set_id, outs in zip(ids, results):
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG()


def run(x, w, scale):
    _SD["_local_exclude_set"] = _hook
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
