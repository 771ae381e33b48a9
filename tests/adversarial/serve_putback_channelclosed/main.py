"""Pure Python: ``dict.get`` replaced in ``dict``'s namespace. In the serve loop's
put-back after a trial's handler (outside every ``try``), the hook raises the channel's own
``ChannelClosed``; the loop has no handler there, so the worker's serve ends. What does the
audit blame?"""
import sys as _sys

from lent_kit import REPLACED as _ORIG
from lent_kit import answer as _answer
from lent_kit import install_method as _install

LOG = {"fired": 0, "err": None}


from hf_eval.isolation.channel import ChannelClosed  # noqa: E402


def _get(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "_put_back" and f.f_back is not None \
            and f.f_back.f_code.co_name == "serve" and f.f_back.f_locals.get("op") == "trial":
        raise ChannelClosed("the audit closed the channel (harness)")
    return _ORIG["get"](self, *args)


def run(x, w, scale):
    _install(dict, "get", _get, False)
    return _answer(x, w, scale)
