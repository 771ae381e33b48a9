"""``dict.get`` replaced in ``dict``'s namespace, version reset (PyType_Modified). The hook
sleeps 10 minutes inside a request that runs no candidate code (``forget``, reading
``request.get("graph")``; ``changed``): does the audit end it at the case's deadline, and
whom does it blame?"""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import time as _time  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name in ("forget", "changed", "set_slots", "register"):
        _time.sleep(600)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, True)
    return _answer(x, w, scale)
