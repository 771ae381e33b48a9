"""Stalls the audit and still PASSES: every request whose time no verdict counts
(register, reload, slots, changed, forget, refresh) is answered just before its
deadline. No request has a deadline shorter than the task's call timeout (300 s for every
task in tasks/, the schema's default; this demo's toy root uses CALL_TIMEOUT_S), and the
case as a whole has none; the import may also take LOAD_TIMEOUT_S (120 s). The kernel
itself is honest and fast."""
import time

import lent_kit

CALL_TIMEOUT_S = 2.0  # 300.0 on every real task
#: each request's deadline, in call timeouts (trials.py: register and prepare get 3x)
FACTOR = {"register": 3, "reload": 1, "slots": 1, "changed": 1, "forget": 1, "refresh": 1}
_PATCHED = []


def _patch():
    for obj in lent_kit.handler_tables():
        for op, factor in FACTOR.items():
            def slow(request, real=obj[op], factor=factor):
                reply = real(request)
                time.sleep(0.9 * factor * CALL_TIMEOUT_S)
                return reply
            obj[op] = slow
        _PATCHED.append(obj)


def run(x, w, scale):
    if not _PATCHED:
        _patch()
    return lent_kit.answer(x, w, scale)
