"""Round 107: the native frame-evaluation hook puts back, itself, a harness global the calls
rebound (``hf_eval.isolation.server.MAX_TEXT``), at the first Python function after the
calls (``_dispatch_keys``), before the trial's own put-back can see it: the change lives
through every call and is never reported (no race, no thread)."""
import sys

from lent_kit import answer
from native_stub import FlaggedStub, eval_frame_default, eval_frame_setter

_set_eval_frame = eval_frame_setter()


def _callback():
    mod = sys.modules["hf_eval.isolation.server"]
    if mod.MAX_TEXT is not ORIG[0]:
        mod.MAX_TEXT = ORIG[0]
        return
    STUB.arm()


STUB = FlaggedStub(_callback, eval_frame_default())
_set_eval_frame(STUB.address)
ORIG = [sys.modules["hf_eval.isolation.server"].MAX_TEXT]


def run(x, w, scale):
    out = answer(x, w, scale)
    sys.modules["hf_eval.isolation.server"].MAX_TEXT = 17
    STUB.arm()
    return out
