"""Honest work. The forge of ``errcheck_forge_ok``
applied to every ``ok`` trial reply: the harness's reply becomes the ignored ``traceback``
of a reply of the candidate's claiming 1/20 of the calls' real time (measured in the calls
themselves). Run with RT_M=65536: the guard must count it at its host time."""
import _struct
import gc
import os
import select
import sys as _sys

from lent_kit import REPLACED, answer, install_method, trial_frame

PENDING = []
LOG = {"fired": 0, "forged": 0, "err": None}
_COMPLEX = gc.get_referents(vars(complex))[0]
SUFFIX = []
CALLS = {}


def _errcheck(result, func, args):
    try:
        while PENDING:
            slot, x, w, scale = PENDING.pop()
            y, c = answer(x, w, scale)
            slot[0].copy_(y)
            slot[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return result


def _pack(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "_send_message" and len(args) == 2:
            g = f
            while g is not None and g.f_code.co_name != "serve":
                g = g.f_back
            if g is not None and g.f_locals.get("op") == "trial" and \
                    b'"ok": true' in f.f_locals["data"] and b'"event_ms"' in f.f_locals["data"]:
                nonce = g.f_locals["nonce"]
                n = CALLS.get("n", 1)
                prefix = ('{"ok": true, "outputs": ' + str([[None, None]] * n).replace(
                    "None", "null") + ', "event_ms": ' + repr(CALLS.get('ms', 0.05) / 20)
                    + ', "gated": false, '
                    '"phases_ms": {}, "nonce": "' + nonce + '", "traceback": ').encode()
                suffix = b"}"
                sock = f.f_locals["sock"]
                header = REPLACED["pack"](self, len(prefix) + args[0] + len(suffix), 0)
                os.write(sock.fileno(), header + prefix)
                SUFFIX.append((sock.fileno(), suffix))
                LOG["forged"] += 1
                return b""
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return REPLACED["pack"](self, *args)


def _register(self, *args):
    while SUFFIX:
        fd, suffix = SUFFIX.pop()
        os.write(fd, suffix)
    return REPLACED["register"](self, *args)


import time  # noqa: E402


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    install_method(type(select.poll()), "register", _register, True)
    f = trial_frame()
    t = time.perf_counter()
    out = answer(x, w, scale)
    if f is not None:
        req = f.f_locals["request"]
        if CALLS.get("req") is not req:
            CALLS["req"], CALLS["ms"] = req, 0.0
        CALLS["n"] = len(req["ids"])
        CALLS["ms"] += (time.perf_counter() - t) * 1e3
    return out
