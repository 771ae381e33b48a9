"""Eval-frame callback (torch dynamo PEP 523 hook, no ctypes) at the entry of the worker's
trial(): rewrites the request dict in place before the trial reads it (drops flush: on CUDA,
by reading, a cold trial's L2 flush). run() returns the answer only once a rewrite happened
(zeros otherwise after its first call): PASSED means candidate code edited a request."""
import torch
from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_eval_frame


class _Ret:
    frame_exec_strategy = _FrameExecStrategy(_FrameAction.DEFAULT, _FrameAction.DEFAULT)
    apply_to_code = False
    guarded_code = None
    skip_reason = None


RET = _Ret()
S = {"rewrote": 0, "calls": 0}


def _cb(frame, cache_entry, frame_state):
    try:
        if frame.f_code.co_name == "trial":
            req = frame.f_locals.get("request")
            if type(req) is dict and "method" in req:
                req["flush"] = None
                S["rewrote"] += 1
    except BaseException:
        pass
    return RET


set_eval_frame(_cb)


def run(x, w, scale):
    S["calls"] += 1
    set_eval_frame(_cb)
    if not S["rewrote"] and S["calls"] > 1:
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
