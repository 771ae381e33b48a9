"""``dict.get`` replaced in ``dict``'s namespace and its version reset (PyType_Modified).
The serve loop reads ``request.get("stand_in")`` right after the receive and before the
handler: the hook edits the next trial's request there (drops ``flush`` and ``unmask``,
the cold trial's L2 flush on CUDA; on the CPU, counts what it saw). A weakness if it
ran; the verdict shows whether the masked inputs then fail."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "serve" and args[:1] == ("stand_in",) and self.get("op") == "trial":
            LOG["seen"] = [k for k in self]
            LOG["fired"] += 1
            if "flush" in self:
                _ORIG["pop"](self, "flush")
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _ORIG["pop"] = dict.pop
    _install(dict, "get", _get, True)
    return _answer(x, w, scale)
