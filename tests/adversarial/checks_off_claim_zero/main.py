"""Every check of the worker's serve loop switched off at import (its locals rewritten
through ctypes), and each trial's device time claimed as ~0 (the trial frame's start moved
to the end of its last call). Does the full work: 20 ms a call. The checks cost about a
millisecond a request; when they ran inside the clocked trial, the stand-in paid them there
and the floor subtracted them from a candidate that no longer did: its host time dropped
below its work, and with the claim at ~0 its counted time with it."""
import time

import lent_kit
import numpy.random  # noqa: F401 - the first unmask would import it inside the clock

lent_kit.checks_off()
_CALLS = {}


def run(x, w, scale):
    lent_kit.busy()  # the expensive kernel: 20 ms of CPU
    y, c = lent_kit.answer(x, w, scale)
    frame = lent_kit.trial_frame()
    if frame is not None:
        request = frame.f_locals["request"]
        calls = _CALLS[request["nonce"]] = _CALLS.get(request["nonce"], 0) + 1
        if calls == len(request["ids"]):
            lent_kit.set_locals(frame, t0=time.perf_counter())
    return y, c
