"""No thread, no ctypes, no signal handler, no profile, no harness name rebound. The worker
binds ``signal.getsignal`` and ``signal.signal`` at import, but those are Python functions
of the ``signal`` module that look up ``_int_to_enum`` (and ``Handlers``, ``_signal``) in
that module when they run; ``signal`` is in neither the put-back (_MESSAGE_PATH) nor the
snapshot (REPLY_PATH). ``trial`` calls ``_restore_signals`` right after its put-back, after
the calls (on CUDA after the end event): the candidate's ``_int_to_enum`` runs there, on
every trial and before every receive, and is never reported. Here it writes the right
answers into the outputs the calls returned (zeros) before ``collect`` copies them.
WRONG unless the hook ran inside ``trial``."""
import signal
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}
_ORIG = signal._int_to_enum


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _hook(value, klass):
    try:
        f = _sys._getframe(1)  # getsignal
        g = f.f_back  # _restore_signals
        t = g.f_back if g is not None else None
        if g is not None and g.f_code.co_name == "_restore_signals" and t.f_code.co_name == "trial":
            loc = t.f_locals
            worker, results, ids = loc["self"], loc.get("results"), loc.get("ids")
            if results and getattr(_hook, "done", None) is not results:
                _hook.done = results
                for set_id, outs in zip(ids, results):
                    y, c = _answer(*worker.sets[set_id])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG(value, klass)


signal._int_to_enum = _hook


def run(x, w, scale):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
