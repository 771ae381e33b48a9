"""Variant of threading_oddkey on the other global (``_trace_hook``, read by
``threading.gettrace`` and written by ``threading.settrace``, both called by
``_cleared_hooks``), to show the whole of ``threading``'s namespace is open, not one
name. No thread, no ctypes, no signal, no harness name rebound. ``collect`` calls
``_state_problems`` first, which calls ``_cleared_hooks`` first, which calls
``threading.getprofile``/``gettrace``/``setprofile``/``settrace``: Python functions
whose globals are ``threading``'s namespace, which no put-back, odd-key scan or
integrity check covers (only ``hf_eval`` modules, ``REPLY_PATH`` and ``builtins`` are).
Each call plants a key of the candidate's class, hashed like ``"_profile_hook"``, ahead
of the real entry in ``vars(threading)``; the ``LOAD_GLOBAL`` of ``getprofile`` meets it
and runs its ``__eq__`` inside ``collect`` (after the put-back and the type-table
restore, before the copies): it removes itself, writes the right answers into the zero
outputs the calls returned, and answers False. WRONG unless the key ran."""
import sys as _sys
import threading

import torch
from lent_kit import answer as _answer

LOG = {"fired": 0, "err": None}
_TD = vars(threading)


class _K:
    def __hash__(self):
        return hash("_trace_hook")

    def __eq__(self, other):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "collect":
                f = f.f_back
            if f is not None:
                _TD.pop(self, None)
                worker = f.f_locals["self"]
                for set_id, outs in worker.produced:
                    y, c = _answer(*worker.sets[set_id])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def run(x, w, scale):
    if not any(type(k) is _K for k in list(_TD)):
        value = _TD.pop("_trace_hook")
        _TD[_K()] = None
        _TD["_trace_hook"] = value
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
