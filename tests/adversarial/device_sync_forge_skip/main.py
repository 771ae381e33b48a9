"""Timing, through round 106's device route (``device_sync_gc_disable``): run() does
the honest work and sets the worker's ``device`` to an object whose ``type`` (read by
``Worker._sync()`` after the post-call put-back) (1) rebinds the server module's
``_perf_counter`` for one call, so the CPU clock the trial reads right after reports
1 us for the calls (a forged claim), and (2) rebinds ``_restore_signals`` and
``_kernels_replaced`` for one and two calls to no-ops that put themselves back: about
80 us of the harness's own part after the calls that the stand-in's floor holds and this
candidate no longer pays. Every name is back before the put-back that precedes the send.
The question: does the guard (host time less the floor, 5 %, the slack) still count the
work?"""
import sys

import torch

SERVER = sys.modules.get("hf_eval.isolation.server")
REAL = {n: getattr(SERVER, n) for n in ("_perf_counter", "_restore_signals",
                                        "_kernels_replaced")} if SERVER else {}
S = {"t0": None, "kr": 0}


#: Where the worker keeps its device (its instance dictionary, under this name).
KEY = "_device"


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _fake_clock():
    SERVER._perf_counter = REAL["_perf_counter"]
    return S["t0"] + 1e-6


def _no_restore(replaced):
    SERVER._restore_signals = REAL["_restore_signals"]


def _no_kernels(ops):
    S["kr"] += 1
    if S["kr"] >= 2:
        SERVER._kernels_replaced = REAL["_kernels_replaced"]
    return None


class Dev:
    def __init__(self, worker, real):
        self.worker, self.real = worker, real

    @property
    def type(self):
        vars(self.worker)[KEY] = self.real
        trial = sys._getframe(2)  # type <- _sync <- trial
        S["t0"], S["kr"] = trial.f_locals.get("t0"), 0
        if S["t0"] is not None:
            SERVER._perf_counter = _fake_clock
        SERVER._restore_signals = _no_restore
        SERVER._kernels_replaced = _no_kernels
        return self.real.type


def run(x, w, scale):
    out = _answer(x, w, scale)
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None and SERVER is not None:
        worker = f.f_locals["self"]
        vars(worker)[KEY] = Dev(worker, vars(worker)[KEY])
    return out
