"""Pure Python: ``dict.get`` replaced in ``dict``'s namespace (mappingproxy route of
``dictget_proxy_collect``); the hook sleeps in ``collect`` (inside the harness's
step, after the calls, no thread) for 10 minutes. The audit must end it at its deadline."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import time as _time  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "collect":
        _time.sleep(600)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, False)
    return _answer(x, w, scale)
