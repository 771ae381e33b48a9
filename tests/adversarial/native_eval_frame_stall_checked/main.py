"""Round 107: the native frame-evaluation hook used to stall the audit in a harness-only
request: run() is honest and arms the hook; the callback re-arms until the serve loop is
handling ``checked`` (the off-clock request after each trial), then sleeps 1000 s there.
Expected: the request's deadline (harness budget) ends it as the candidate's TIMEOUT."""
import sys
import time

from lent_kit import answer
from native_stub import FlaggedStub, eval_frame_default, eval_frame_setter

_set_eval_frame = eval_frame_setter()


def _callback():
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "serve":
            op = f.f_locals.get("op")
            if type(op) is str and op == "checked":
                time.sleep(1000)
                return
            break
        f = f.f_back
    STUB.arm()


STUB = FlaggedStub(_callback, eval_frame_default())
_set_eval_frame(STUB.address)


def run(x, w, scale):
    STUB.arm()
    return answer(x, w, scale)
