"""Code of its own run inside the integrity check: a ``__getattr__`` on ``enum.property``
(the members of ``socket``'s enum classes, which the check walks) that finds the serve
loop's frame and rewrites the live reply (a trial's event time and phases) after every
check passed, with ``json`` and ``socket`` untouched. The check must read nothing
through attribute lookups on the objects it compares; the record must hold no forged
figure."""
import enum
import sys

import lent_kit


def _forge(self, name):
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    if f is not None:
        r = f.f_locals.get("reply")
        if type(r) is dict and "event_ms" in r:
            r["event_ms"] = 0.000123
            r["phases_ms"] = {k: 0.000123 for k in r.get("phases_ms", {})}
    raise AttributeError(name)
enum.property.__getattr__ = _forge
def run(x, w, scale):
    return lent_kit.answer(x, w, scale)
