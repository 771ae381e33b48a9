"""Goal 3: ``SystemExit(0)`` raised from the key's ``__hash__`` in the serve loop's top
restore, which sits outside every try: the worker leaves serve() as if the channel had
closed. What does the audit blame? (honest output otherwise)"""
import gc
import sys as _sys

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
    if f is not None and f.f_locals.get("request") is None and LOG["fired"] >= 2:
        raise SystemExit(0)
    LOG["fired"] += 1


class _K:
    def __hash__(self):
        if ARMED[0]:
            _hook()
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
