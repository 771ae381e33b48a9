"""The worker's ``_type_modified`` given an ``errcheck`` that raises ``KeyboardInterrupt``
when ``_restore_type_tables`` calls it after the calls (honest outputs; the calls touch
``complex``'s table). The exception leaves the trial's ``finally`` before the put-back and
passes the serve loop's ``except Exception``: does the worker die, and what does the
reason blame?"""
import ctypes
import gc
import sys as _sys

from lent_kit import answer

_COMPLEX = gc.get_referents(vars(complex))[0]


def _errcheck(result, func, args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "_restore_type_tables" and f.f_back.f_code.co_name == "trial":
        raise KeyboardInterrupt("the audit's reference failed: harness bug")
    return result


ctypes.pythonapi.PyType_Modified.errcheck = _errcheck


def run(x, w, scale):
    _COMPLEX["touch"] = None
    return answer(x, w, scale)
