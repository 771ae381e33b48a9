"""The worker clears torch's eval-frame callback right after a trial's calls and
after every handler. Here the callback is set by a finalizer the serve loop itself runs at
its top (kept.clear(), after the last handler's clear), so it is live through the put-back,
the receive and the next handler's entry. At a non-trial handler's entry it unsets itself
and plants a new finalizer object in the serve loop's `kept` (re-armed at the next loop
top); at the trial's entry it rewrites the request (drops flush: on CUDA, by reading, the
cold trial's L2 flush) and run() unsets it first thing, so no clear ever finds it.
run() returns zeros unless a rewrite happened: PASSED means an unreported request edit."""
import sys

import torch
from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_eval_frame


class _Ret:
    frame_exec_strategy = _FrameExecStrategy(_FrameAction.DEFAULT, _FrameAction.DEFAULT)
    apply_to_code = False
    guarded_code = None
    skip_reason = None


RET = _Ret()
S = {"rewrote": 0, "calls": 0, "planted": 0}


def _arm_if_loop_top():
    f = sys._getframe(1)
    for _ in range(4):
        if f is None:
            return
        if f.f_code.co_name == "serve":
            if f.f_locals.get("request", 0) is None:  # the loop's top: no message in hand
                set_eval_frame(_cb)
            return
        f = f.f_back


class _Arm:
    def __del__(self):
        _arm_if_loop_top()


def _cb(frame, cache_entry, frame_state):
    try:
        back = sys._getframe(1)
        for _ in range(3):
            if back is None or back.f_code.co_name == "serve":
                break
            back = back.f_back
        if back is not None and back.f_code.co_name == "serve":
            if frame.f_code.co_name == "trial":
                req = frame.f_locals.get("request")
                if type(req) is dict and "method" in req:
                    req["flush"] = None
                    S["rewrote"] += 1
            else:  # another handler: hide, re-arm at the next loop top
                set_eval_frame(None)
                back.f_locals["kept"].append(_Arm())
                S["planted"] += 1
    except BaseException:
        pass
    return RET


def run(x, w, scale):
    set_eval_frame(None)
    S["calls"] += 1
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    a, b = y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    if not S["rewrote"] and S["calls"] > 2:
        a, b = torch.zeros_like(a), torch.zeros_like(b)
    # a python object dying with this call's outputs, freed at the serve loop's top
    import weakref
    weakref.finalize(a, _arm_if_loop_top)
    return a, b
