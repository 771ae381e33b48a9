"""audit_hook_slot_swap, after emptying the worker's own audit hook (the one that vetoes
every later hook) by giving it another code object for a moment: the hook added then
would swap the slot lists for dummies inside collect (so the harness copies the garbage
run() returns there, while the real slots keep the answer run() wrote itself) and put
them back, with the worker's record of them, in the serve loop. The code swap is
refused, so no hook is added and the garbage is what the audit judges."""
import sys

import lent_kit

K = {"armed": False, "saved": None}
hook = lent_kit.slot_swapping_hook(K, lent=True)
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
run = lent_kit.arming_run(K)
