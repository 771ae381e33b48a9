"""The worker's own ``ctypes`` function object ``_type_modified`` (bound at import from
``ctypes.pythonapi.PyType_Modified``, which ``pythonapi`` caches, so the candidate reaches
the very object) given an ``errcheck`` of the candidate's: ctypes calls it after every call
of the C function. ``_restore_type_tables`` calls ``_modified(kind)`` for a table it had to
put back, right after the calls and before the put-back of names. The calls add a harmless
str key to ``complex``'s table, so the restore calls ``_modified`` and the candidate's
``errcheck`` runs inside the harness's steps after the calls, where it fills the zeros the
calls returned. The change of the table is reported (RUNTIME_ERROR "a built-in type's
methods"), so the verdict holds: a WEAKNESS (candidate code inside the restore)."""
import ctypes
import gc

from lent_kit import answer, trial_frame, zeros

PENDING = []
LOG = {"fired": 0, "err": None}
_COMPLEX = gc.get_referents(vars(complex))[0]


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


ctypes.pythonapi.PyType_Modified.errcheck = _errcheck
STATE = {}


def run(x, w, scale):
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
    _COMPLEX["touch"] = None  # a str key: the restore takes it out and calls _modified
    return zeros(x, w)
