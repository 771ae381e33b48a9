"""Round 107: the native frame-evaluation hook, used on the reply path: run() does the honest
work, and the hook, at the entry of ``_send_reply`` (after every put-back and check), finds
the serve loop's reply and divides its ``event_ms`` (the CPU claim) by 100. The guard is
expected to count at least what the host time implies."""
import sys

from lent_kit import answer
from native_stub import FlaggedStub, eval_frame_default, eval_frame_setter

_set_eval_frame = eval_frame_setter()


def _callback():
    f = sys._getframe(1)
    try:
        if f.f_code.co_name == "serve":
            reply = f.f_locals.get("reply")
            if type(reply) is dict and type(reply.get("event_ms")) is float:
                reply["event_ms"] = reply["event_ms"] / 100.0
                return
    except BaseException:  # noqa: BLE001
        pass
    STUB.arm()


STUB = FlaggedStub(_callback, eval_frame_default())
_set_eval_frame(STUB.address)


def run(x, w, scale):
    STUB.arm()
    return answer(x, w, scale)
