"""``struct.Struct.pack`` replaced (as ``struct_pack_fill``); at the first trial's
reply the hook sleeps for an hour, with the reply in hand, inside the harness's send. The
audit must end it as TIMEOUT within its limits."""
import _struct
import sys as _sys
import time

from lent_kit import REPLACED, answer, install_method


def _pack(self, *args):
    f = _sys._getframe(1)
    if f.f_code.co_name == "_send_message":
        g = f
        while g is not None and g.f_code.co_name != "serve":
            g = g.f_back
        if g is not None and g.f_locals.get("op") == "trial":
            time.sleep(3600)
    return REPLACED["pack"](self, *args)


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    return answer(x, w, scale)
