"""``dict.get`` replaced in ``dict``'s namespace, version reset (PyType_Modified). The serve
loop reads ``request.get("stand_in")`` right after the receive, before any handler: the
hook sees every request there (and can edit it in place, e.g. drop a cold trial's
``flush`` on CUDA). Witness: once it has seen a trial request, later calls raise an error
naming the request's keys, so a RUNTIME_ERROR quoting them shows the hook ran there."""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "serve" and args[:1] == ("stand_in",) \
                and _ORIG["get"](self, "op") == "trial":
            LOG["seen"] = sorted(k for k in self if type(k) is str)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, True)
    if LOG["fired"]:
        raise RuntimeError(f"witness: the serve loop's request seen by the hook {LOG['fired']} "
                           f"times, keys {LOG.get('seen')}")
    return _answer(x, w, scale)
