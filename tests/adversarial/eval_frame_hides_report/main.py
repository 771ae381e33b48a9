"""Honest outputs, but torch.equal (a guarded name) rebound for good at import. An eval-frame
callback (torch dynamo PEP 523 hook, no ctypes) at the entry of send_reply rewrites a reply
that reports "harness integrity" into a plain success. PASSED means the checks' report was
suppressed (COMPILE_ERROR or RUNTIME_ERROR is due)."""
import torch
from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_eval_frame


class _Ret:
    frame_exec_strategy = _FrameExecStrategy(_FrameAction.DEFAULT, _FrameAction.DEFAULT)
    apply_to_code = False
    guarded_code = None
    skip_reason = None


RET = _Ret()
S = {"hidden": 0}


def _cb(frame, cache_entry, frame_state):
    try:
        if frame.f_code.co_name == "send_reply":
            obj = frame.f_locals.get("obj")
            if type(obj) is dict and "harness integrity" in str(obj.get("error", "")):
                nonce = obj.get("nonce")
                obj.clear()
                obj.update({"ok": True, "nonce": nonce})
                S["hidden"] += 1
    except BaseException:
        pass
    return RET


_equal = torch.equal
torch.equal = lambda a, b: _equal(a, b)
set_eval_frame(_cb)


def run(x, w, scale):
    set_eval_frame(_cb)
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
