"""audit_hook_slot_swap, after emptying the worker's own audit hook (the one that vetoes
every later hook) by giving it another code object for a moment: the hook added then
would swap the slot lists for dummies inside collect (so the harness copies the garbage
run() returns there, while the real slots keep the answer run() wrote itself) and put
them back, with the worker's record of them, in the serve loop. The code swap is
refused, so no hook is added and the garbage is what the audit judges."""
import sys

import lent_kit

K = {"armed": False, "saved": None}
BUSY = [0]
def hook(event, args):
    if BUSY[0] or event != "sys.setprofile":
        return
    BUSY[0] = 1
    try:
        f = lent_kit.collect_or_serve_frame(1)
        if f is None:
            return
        if f.f_code.co_name == "collect" and K["armed"] and K["saved"] is None:
            worker = f.f_locals["self"]
            K["saved"] = lent_kit.swap_in_dummies(worker.slots)
            K["lent"] = worker.lent
            worker.lent = lent_kit.lent_record(worker.slots)
            K["armed"] = False
        elif f.f_code.co_name == "serve" and K["saved"] is not None:
            lent_kit.restore_slots(K["saved"])
            f.f_locals["self"].lent = K["lent"]
            K["saved"] = None
    finally:
        BUSY[0] = 0
# The veto is a plain Python function: give it a no-op body for one call, add our
# hook, give the body back (the integrity snapshot then sees the original code again).
_srv = sys.modules["hf_eval.isolation.server"]
_veto = _srv._refuse_audit_hooks
_orig_code = _veto.__code__
try:
    _veto.__code__ = (lambda event, args: None).__code__
    try:
        sys.addaudithook(hook)
    finally:
        _veto.__code__ = _orig_code
except RuntimeError:
    pass
def run(x, w, scale):
    y, c, slot = lent_kit.answer_in_slot(K, x, w, scale)
    if slot is None:
        return y, c
    K["armed"] = True
    return lent_kit.filler(y, c)
