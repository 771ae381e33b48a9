"""``random_raw`` replaced in the method table of numpy's ``BitGenerator`` (``Philox``'s
base; not among the restored tables; the reveal calls ``bits.random_raw(part.size)`` by
name). The hook XORs the stream into the caller's ``part`` itself and hands back zeros
(the harness's XOR is then a no-op); after the last chunk of the arena it computes every
set's answer, before the calls and the worker's clock (t0). The calls return those
answers (no work in them). Run at RT_M=65536: the guard must count the trial at its host
time (work inside the request, outside the claim). This version only takes over the XOR
(a probe that the hook runs inside the reveal; PASSED means it did the unmask right)."""
import sys as _sys

import numpy as np
import torch
from lent_kit import REPLACED, answer, install_method, trial_frame

LOG = {"fired": 0, "err": None}
READY = {}


def _random_raw(self, size=None, output=True):
    raw = REPLACED["random_raw"](self, size, output)
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "draw" and f.f_locals.get("xor"):
            part = f.f_locals["part"]
            np.bitwise_xor(part, raw, out=part)
            LOG["fired"] += 1
            return np.zeros_like(raw)
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return raw


def run(x, w, scale):
    install_method(np.random.bit_generator.BitGenerator, "random_raw", _random_raw, True)
    f = trial_frame()
    if f is not None and f.f_locals["request"].get("unmask") and not LOG["fired"]:
        return torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16), \
            torch.zeros(1, dtype=torch.int64)  # WRONG unless the hook ran in a reveal
    return answer(x, w, scale)
