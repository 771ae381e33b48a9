"""gc_callback_slot_swap, hidden: the collector callback is added to the interpreter's
list, then the module's name `gc.callbacks` is rebound to an empty list, and `gc.disable`
to a no-op (automatic collection stays on, threshold 1). The callback would swap the
slot lists for dummies inside collect, after its check, and put them back before the
serve loop's. The worker holds the interpreter's list and the collector's controls as
they were before any candidate code, and the names rebound are harness state."""
import gc
import sys

import lent_kit
import torch

S = {"worker": None, "saved": None, "armed": False, "swaps": 0}

KEEP = []

def _cb(phase, info):
    if phase != "start":
        # one live tracked object after each collection: the next tracked allocation
        # starts another (threshold 1), so the callback runs at (nearly) every one
        if len(KEEP) > 100000:
            KEEP.clear()
        KEEP.append([])
        return
    try:
        f = sys._getframe(1)
    except ValueError:
        return
    if S["saved"] is None and S["armed"]:
        if f.f_code.co_name == "<listcomp>" and f.f_back is not None \
                and f.f_back.f_code.co_name == "collect" and "problems" in f.f_back.f_locals \
                and "lent" not in f.f_back.f_locals:
            W = f.f_back.f_locals["self"]
            S["saved"] = [(s, list(s)) for s in W.slots]
            for s in W.slots:
                s[:] = [torch.empty_like(t) for t in s]
            S["armed"] = False
            S["swaps"] += 1
    elif S["saved"] is not None:
        g = f
        while g is not None and g.f_code.co_name != "collect":
            if g.f_code.co_name in ("trial", "serve"):
                for s, orig in S["saved"]:
                    s[:] = orig
                S["saved"] = None
                return
            g = g.f_back

gc.callbacks.append(_cb)
gc.callbacks = []            # the check reads the module attribute
gc.disable = lambda: None    # collect's "no collection in here" is now a no-op
gc.enable()
gc.set_threshold(1, 1, 1)

K = {}

def run(x, w, scale):
    gc.enable()
    y, c, slot = lent_kit.answer_in_slot(K, x, w, scale)
    if slot is None:
        return y, c
    S["armed"] = True
    return lent_kit.filler(y, c)
