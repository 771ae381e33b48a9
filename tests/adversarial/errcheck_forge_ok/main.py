"""Two uncovered tables and the worker's own ctypes object together. (1) As
``errcheck_type_modified``: the calls return zeros and touch ``complex``'s table; the
``errcheck`` of the worker's ``_type_modified`` fills the slots inside
``_restore_type_tables``, and the trial is refused ("a built-in type's methods"). (2)
``_struct.Struct.pack`` replaced: at the refusal's send, the hook writes on the channel a
header announcing a longer message and an ``ok`` reply's prefix (the trial's nonce, the
outputs in their slots, a claim), which ends in ``"traceback": `` , and returns an empty
header, so the harness's own refusal (``data``) becomes the value of ``traceback`` (a field
the audit never reads in an ``ok`` reply). (3) ``register`` replaced in ``select.poll``'s
table writes the closing ``}`` at the next receive, before the worker waits. Any refusal
of a trial is so turned into an ``ok``. WRONG/RUNTIME_ERROR unless all three ran."""
import _struct
import ctypes
import gc
import os
import select
import sys as _sys

from lent_kit import REPLACED, answer, install_method, trial_frame, zeros

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


ctypes.pythonapi.PyType_Modified.errcheck = _errcheck
STATE = {}


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    install_method(type(select.poll()), "register", _register, True)
    f = trial_frame()
    if f is None:
        return answer(x, w, scale)
    worker, request = f.f_locals["self"], f.f_locals["request"]
    if STATE.get("req") is not request:
        STATE["req"], STATE["k"] = request, 0
    k = STATE["k"]
    STATE["k"] += 1
    CALLS["n"] = len(request["ids"])
    if k < len(worker.slots):
        PENDING.append((worker.slots[k], x, w, scale))
    _COMPLEX["touch"] = None
    return zeros(x, w)
