"""No ``gc``, no ``ctypes``, no thread. ``dict``'s real namespace taken from its
mappingproxy's comparison: ``vars(dict) == grab`` compares the proxy's mapping with
``grab``, and ``dict.__eq__`` answering NotImplemented hands the real dict to
``grab.__eq__``. ``get`` replaced there and the type cache emptied: ``collect``'s read
``_tensor_names.get(name)`` (a mappingproxy's ``get``, looked up by name) runs the hook after
every check, which fills the zeros the calls returned. Shows that vetoing
``gc.get_referents`` would not close the route. WRONG unless it ran."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import zeros as _zeros

LOG = {"fired": 0, "err": None}


class _Grab:
    got = None

    def __eq__(self, other):
        _Grab.got = other
        return False

    __hash__ = object.__hash__


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "collect":
            worker = f.f_locals["self"]
            for set_id, outs in worker.produced:
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    if _Grab.got is None:
        vars(dict) == _Grab()  # noqa: B015
        real = _Grab.got
        _ORIG["get"] = real["get"]
        real["get"] = _get
        _sys._clear_type_cache()
    return _zeros(x, w)
