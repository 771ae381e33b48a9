"""No thread, no ctypes, no signal, no finalizer. The worker's integrity and state checks
run in the worker and reach the audit only as a reply, and every reply leaves through
``Channel.send``, which looks up ``hf_eval.isolation.channel._encode`` at each send. The
candidate rebinds it at import (persistently) and also rebinds ``server._perf_counter``
(the worker's CPU clock: every claim x 0.6), which ``tests/adversarial/rebind_harness_global``
shows the checks report. The checks do report both: into a reply that the candidate's
``_encode`` turns back into the reply the handler made (taken from the serve loop's
``kept``, where the harness keeps it) before encoding it. The audit never hears of
either change: the verdict is the candidate's clean one, not RUNTIME_ERROR."""
import sys as _sys
import time

import torch

import hf_eval.isolation.channel as _ch
import hf_eval.isolation.server as _srv

_REAL = _ch._encode
_CLOCK = time.perf_counter
LOG = {"hidden": 0}


def _dumps(obj, *a, **k):
    if type(obj) is dict and obj.get("ok") is False and \
            str(obj.get("error", "")).startswith("harness integrity"):
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "serve":
            f = f.f_back
        if f is not None:
            loc = f.f_locals
            kept = loc.get("kept") or []
            original = next((r for r in reversed(kept)
                             if type(r) is dict and r.get("ok") is True), None)
            loc.clear()
            if original is not None:
                LOG["hidden"] += 1
                obj = {**original, "nonce": obj.get("nonce")}
    return _REAL(obj, *a, **k)


_ch._encode = _dumps
_srv._perf_counter = lambda: _CLOCK() * 0.6


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
