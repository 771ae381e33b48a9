"""Round 107, variant: the native hook fills the zeros at the entry of ``Worker._checked``
(inside ``collect``, after ``_state_problems`` and the kernel checks, before the copies):
the caller frame is ``collect``."""
import sys

from native_stub import FlaggedStub, PendingFill, eval_frame_default, eval_frame_setter

PENDING = PendingFill()
_set_eval_frame = eval_frame_setter()


def _callback():
    if sys._getframe(1).f_code.co_name != "collect":
        PENDING.stub.arm()
        return
    PENDING.fill()


PENDING.stub = FlaggedStub(_callback, eval_frame_default())
_set_eval_frame(PENDING.stub.address)


def run(x, w, scale):
    return PENDING.zeros(x, w, scale)
