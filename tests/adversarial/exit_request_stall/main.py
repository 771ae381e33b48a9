"""``dict.get`` replaced in ``dict``'s namespace, version reset (PyType_Modified). The serve
loop reads ``request.get("stand_in")`` before it looks at ``op``: on the audit's ``exit``
request the hook sets SIGTERM and SIGINT to be ignored (after the loop's own restore of the
signals), forks a child in a new session that ignores them too, and sleeps 10 minutes. Does
the audit end the worker in time, with no survivor, and charge no one else?"""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


import os as _os  # noqa: E402
import signal as _signal  # noqa: E402
import time as _time  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "serve" and args[:1] == ("stand_in",) \
            and _ORIG["get"](self, "op") == "exit":
        for s in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
            try:
                _signal.signal(s, _signal.SIG_IGN)
            except BaseException:  # noqa: BLE001
                pass
        try:
            if _os.fork() == 0:
                _os.setsid()
                _time.sleep(600)
                _os._exit(0)
        except BaseException:  # noqa: BLE001
            pass
        _time.sleep(600)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, True)
    return _answer(x, w, scale)
