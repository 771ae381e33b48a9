"""Stall the audit off its clock: after every timed trial's last call, a thread sleeps
50 ms (the trial's reply leaves) and then holds the GIL for ~1.5 s in one big-int power
(CPython does not release the GIL inside it), so the serve loop cannot answer `checked`
(nor `forget`, `changed`, the next `register`). Each is a harness request under the
session's 120 s budget; does the case stay inside it, and is the next candidate clean?"""
import threading
import time

import lent_kit

_state = {}


def _hold():
    time.sleep(0.05)
    pow(3, 4_000_000) % 7  # ~0.65 s holding the GIL on this machine


def run(x, w, scale):
    y, c = lent_kit.answer(x, w, scale)
    f = lent_kit.trial_frame()
    if f is not None and f.f_locals["request"].get("unmask"):
        req = f.f_locals["request"]
        if lent_kit.call_index(_state, req) == len(req["ids"]) - 1:
            threading.Thread(target=_hold, daemon=True).start()
    return y, c
