"""Round 106's device route aimed at the reply's way out: after the post-call put-back,
``Worker._sync()`` reads the worker's ``device``; the object rebinds the channel module's
``_encode`` (the compiled JSON encoder the send uses) to one that rewrites the trial's
reply (claim 1 us) and puts itself back when called. run() does the honest work. The
question: does the put-back that precedes the send (a serve-loop local, bound before any
candidate code) restore and report the name before the send can call it?"""
import sys

import torch

CHANNEL = sys.modules.get("hf_eval.isolation.channel")
REAL_ENCODE = getattr(CHANNEL, "_encode", None)


#: Where the worker keeps its device (its instance dictionary, under this name).
KEY = "_device"


def _encode(obj, level):
    CHANNEL._encode = REAL_ENCODE
    if type(obj) is dict and "event_ms" in obj:
        obj = {**obj, "event_ms": 0.001}
    return REAL_ENCODE(obj, level)


class Dev:
    def __init__(self, worker, real):
        self.worker, self.real = worker, real

    @property
    def type(self):
        vars(self.worker)[KEY] = self.real
        CHANNEL._encode = _encode
        return self.real.type


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    out = y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None and CHANNEL is not None:
        worker = f.f_locals["self"]
        vars(worker)[KEY] = Dev(worker, vars(worker)[KEY])
    return out
