"""Round 106's device route used to set torch's frame-evaluation callback (round 101's
route) after the post-call clear: ``Worker._sync()`` reads the worker's ``device`` right
after the calls, after the callback was cleared; the object installs the callback there,
which then runs at every Python function of the harness and writes the answers into the
zeros the calls returned when ``_checked`` starts. The callback cannot remove itself
(torch restores it around each call of it). The question: does the clear and report
after the handler still catch a callback set this late?"""
import sys

import torch
from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_eval_frame

#: Where the worker keeps its device (its instance dictionary, under this name).
KEY = "_device"


class _Ret:
    frame_exec_strategy = _FrameExecStrategy(_FrameAction.DEFAULT, _FrameAction.DEFAULT)
    apply_to_code = False
    guarded_code = None
    skip_reason = None


RET = _Ret()
S = {"todo": [], "fills": 0}


def _fill():
    for y_out, c_out, x, w, scale in S["todo"]:
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        y_out.copy_(y.to(torch.bfloat16))
        c_out.copy_((y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
    S["todo"] = []
    S["fills"] += 1


def _cb(frame, cache_entry, frame_state):
    try:
        if frame.f_code.co_name == "_checked" and S["todo"]:
            _fill()
    except BaseException:
        pass
    return RET


class Dev:
    def __init__(self, worker, real):
        self.worker, self.real = worker, real

    @property
    def type(self):
        vars(self.worker)[KEY] = self.real
        set_eval_frame(_cb)
        return self.real.type


def run(x, w, scale):
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    if f is None:
        yy = torch.nn.functional.linear(x.float(), w.float()) * scale
        return yy.to(torch.bfloat16), (yy.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
    S["todo"].append((y, c, x, w, scale))
    worker = f.f_locals["self"]
    vars(worker)[KEY] = Dev(worker, vars(worker)[KEY])
    return y, c
