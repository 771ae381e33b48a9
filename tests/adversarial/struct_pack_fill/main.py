"""``struct.Struct.pack`` replaced in ``_struct.Struct``'s real method table (reached with
``gc.get_referents``; lookup cache emptied, version renewed through ``PyType_Modified``).
``_struct.Struct`` is not among the ~50 types whose tables the worker restores
(``_TYPE_TABLES``), yet the channel's ``_send_message`` calls ``_HEADER.pack(...)`` by name
with the trial's reply in hand, after ``collect`` copied the calls' outputs into the lent
slots. The calls return zeros; the hook computes the right answers there and writes them
into the slots (before the reply's bytes leave, so before the audit's sealed sample).
WRONG (INCORRECT_NUMERICAL, as ``control_zeros``) unless the hook ran."""
import _struct
import sys as _sys

from lent_kit import REPLACED, answer, install_method, trial_frame, zeros

PENDING = []
LOG = {"fired": 0, "err": None}


def _pack(self, *args):
    try:
        if PENDING and _sys._getframe(1).f_code.co_name == "_send_message":
            while PENDING:
                slot, x, w, scale = PENDING.pop()
                y, c = answer(x, w, scale)
                slot[0].copy_(y)
                slot[1].copy_(c)
                LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return REPLACED["pack"](self, *args)


STATE = {}


def run(x, w, scale):
    install_method(_struct.Struct, "pack", _pack, True)
    f = trial_frame()
    if f is None:
        return answer(x, w, scale)
    worker, request = f.f_locals["self"], f.f_locals["request"]
    if STATE.get("req") is not request:
        STATE["req"], STATE["k"] = request, 0
    k = STATE["k"]
    STATE["k"] += 1
    if k < len(worker.slots):
        PENDING.append((worker.slots[k], x, w, scale))
    return zeros(x, w)
