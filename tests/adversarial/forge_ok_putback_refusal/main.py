"""Honest outputs computed in the calls, but every call rebinds
``json.dumps`` (a name of the message path): the trial's put-back restores it and refuses
the trial ("harness integrity: candidate code replaced json.dumps"). The forge of
``errcheck_forge_ok`` (``_struct.Struct.pack`` + ``select.poll``'s ``register``)
turns that refusal into an ``ok``. RUNTIME_ERROR unless the forge worked."""
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
                    b'"ok": false' in f.f_locals["data"]:
                while PENDING:  # the refusal came before collect: the slots are empty
                    slot, y, c = PENDING.pop()
                    slot[0].copy_(y)
                    slot[1].copy_(c)
                    LOG["fired"] += 1
                nonce = g.f_locals["nonce"]
                n = CALLS.get("n", 1)
                prefix = ('{"ok": true, "outputs": ' + str([[None, None]] * n).replace(
                    "None", "null") + ', "event_ms": 0.05, "gated": false, '
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


import json  # noqa: E402

STATE = {}
_DUMPS = json.dumps


def _dumps(*a, **k):
    return _DUMPS(*a, **k)


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    install_method(type(select.poll()), "register", _register, True)
    f = trial_frame()
    y, c = answer(x, w, scale)
    if f is not None:
        worker, request = f.f_locals["self"], f.f_locals["request"]
        if STATE.get("req") is not request:
            STATE["req"], STATE["k"] = request, 0
        k = STATE["k"]
        STATE["k"] += 1
        CALLS["n"] = len(request["ids"])
        if k < len(worker.slots):
            PENDING.append((worker.slots[k], y, c))
        json.dumps = _dumps
    return y, c
