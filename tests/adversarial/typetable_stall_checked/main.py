"""Goal 4: the key's hook sleeps 40 s when it runs in the serve loop's top restore (before
the receive of the request after a trial), i.e. inside a request that runs no candidate
code ('checked'). Must end as TIMEOUT within the deadline."""
import gc
import sys as _sys
import time as _time

from lent_kit import answer as _answer

PENDING = []
ARMED = [False]
LOG = {"fired": 0, "err": None}
_REAL = gc.get_referents(vars(complex))[0]


def _frame(name):
    f = _sys._getframe(2)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def _hook():
    f = _frame("serve")
    if f is not None and f.f_locals.get("request") is None and LOG["fired"] >= 1:
        LOG["fired"] += 1
        _time.sleep(40)
    elif f is not None:
        LOG["fired"] += 1


class _K:
    def __hash__(self):
        if ARMED[0]:
            try:
                _hook()
            except Exception as exc:  # noqa: BLE001
                LOG["err"] = repr(exc)
        return hash('real')

    def __eq__(self, other):
        return ARMED[0]


_KEY = _K()


def _install():
    if not any(type(k) is _K for k in list(_REAL)):
        ARMED[0] = False
        _REAL[_KEY] = None
        ARMED[0] = True


def run(x, w, scale):
    _install()
    return _answer(x, w, scale)
