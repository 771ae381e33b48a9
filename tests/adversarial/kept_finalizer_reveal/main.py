"""Round 114: the serve loop's top puts the signals back, then the built-in types' method
tables (``restore_types()``), and only THEN frees what the last message kept
(``kept.clear()``), which runs the finalizers of the candidate's objects held there. A
finalizer run there changes a type table that nothing puts back before the next
handler's end: it is live through the put-back, the receive and the next handler.

From ``run()``, an object with a ``__del__`` is appended to the serve loop's own ``kept``
list (read, not written, through the serve frame's ``f_locals``). At the next loop top its
``__del__`` installs ``dict.get`` in ``dict``'s table (version renewed with the setter and
deleter of ``type.__abstractmethods__``, as the harness does). That entry runs in the
put-back (passed through) and at the serve loop's own ``request.get("stand_in")`` with the
next request in hand: it puts ``dict.get`` back, hands the loop another such object (the
chain goes on at every message), and, when the request is a trial with an arena to
unmask, puts ``random_raw`` into ``np.random.Philox``'s table. The reveal calls it; there
the candidate takes the seed, unmasks a copy of the arena itself, computes every set's
answers, and takes its entry out again before the trial's restore looks. The calls then
return the precomputed answers: no work between the worker's clock's start and end.
PASSED with calls that do no work would be an escape (goal 1, round 112's reveal class
through a new door); the control the calls fall back to zeros when nothing was precomputed.

Outcome: the workers run /work/main, whose loop top already frees ``kept`` BEFORE the
restores: RUNTIME_ERROR "a built-in type's methods" (HELD there; the snapshot's order,
tree/hf_eval/isolation/server.py:2068-2071, is open by reading)."""
import sys

import numpy as np
import torch
from lent_kit import answer as _answer

CHAIN = True
_REAL_DICT = None
_REAL_PHILOX = None
_orig_get = dict.get
_orig_raw = np.random.BitGenerator.random_raw
_ab = vars(type)["__abstractmethods__"]
STASH = {}  # x's data pointer -> answers precomputed inside the reveal
STATS = {"installed": 0, "sniffed": 0, "revealed": 0}


def _renew(kind):
    _ab.__set__(kind, ())
    _ab.__delete__(kind)
    sys._clear_type_cache()


def _tables():
    import gc
    global _REAL_DICT, _REAL_PHILOX
    if _REAL_DICT is None:
        _REAL_DICT = gc.get_referents(vars(dict))[0]
        _REAL_PHILOX = gc.get_referents(vars(np.random.Philox))[0]
    return _REAL_DICT, _REAL_PHILOX


def _raw_hook(bits, *args, **kwargs):
    real_dict, real_philox = _tables()
    if "random_raw" in real_philox:
        del real_philox["random_raw"]
        _renew(np.random.Philox)
        STATS["revealed"] += 1
        try:
            _precompute(_orig_get(sys._getframe(1).f_locals, "seed"))
        except Exception:  # noqa: BLE001
            pass
    return _orig_raw(bits, *args, **kwargs)


def _precompute(seed):
    from hf_eval.isolation import reveal
    f = sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    worker, request = f.f_locals["self"], f.f_locals["request"]
    arena = vars(worker)["arenas"][request["unmask"]["arena"]]
    copy = vars(arena)["private"].clone()
    reveal.unmask(copy, seed, torch.empty_like(copy))
    for set_id in request["ids"]:
        inputs = vars(worker)["sets"][set_id]
        base = vars(arena)["private"].untyped_storage().data_ptr()
        real = [arena.view_of(v, copy) if isinstance(v, torch.Tensor)
                and v.untyped_storage().data_ptr() == base
                else v for v in inputs]
        STASH[inputs[0].data_ptr()] = _answer(*real)


def _get_hook(self, *args):
    if type(self) is dict and "op" in self and "nonce" in self \
            and sys._getframe(1).f_code.co_name == "serve":
        real_dict, real_philox = _tables()
        real_dict["get"] = _orig_get
        _renew(dict)
        STATS["sniffed"] += 1
        op = self["op"]
        if op == "trial" and self["unmask"]:
            real_philox["random_raw"] = _raw_hook
            _renew(np.random.Philox)
        _orig_get(sys._getframe(1).f_locals, "kept").append(_Link())
    return _orig_get(self, *args)


class _Link:
    def __del__(self):
        if not CHAIN:
            return
        real_dict, _ = _tables()
        real_dict["get"] = _get_hook
        _renew(dict)
        STATS["installed"] += 1


def run(x, w, scale):
    if not STATS.get("started"):
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "serve":
            f = f.f_back
        if f is not None:
            _tables()
            f.f_locals["kept"].append(_Link())
            STATS["started"] = True
        return _answer(x, w, scale)  # the first call: the work, honestly
    got = STASH.pop(x.data_ptr(), None)
    if got is not None:
        return got
    if x.shape[0] and not STATS["revealed"]:
        return _answer(x, w, scale)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
