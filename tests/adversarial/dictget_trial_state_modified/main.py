"""``dict.get`` replaced in ``dict``'s namespace and the type's version reset with
``PyType_Modified`` (ctypes.pythonapi, by a name no veto lists). The trial reads
``state.get("produced")`` (``state = vars(self)``, a real dict, a specialised site) after
the put-back and the class check, before the signals' restore: the hook fills the zeros
in ``results`` there. WRONG unless it ran."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install
from lent_kit import zeros as _zeros

LOG = {"fired": 0, "err": None}


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "trial" and args[:1] == ("produced",):
            t = f.f_locals
            worker, ids, results = t["self"], t["ids"], t["results"]
            for set_id, outs in zip(ids, results):
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, True)
    return _zeros(x, w)
