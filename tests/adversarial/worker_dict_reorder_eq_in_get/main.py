"""Reorders the worker's attributes so that a key that is not a str, with the hash of
``sets``, lies before it: the state check's lookup calls its ``__eq__``, which empties
the findings. Names that are not exactly str are reported before any lookup."""

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
run = lent_kit.slot_writing_run(WORKER)
class Key:
    def __hash__(self): return hash("sets")
    def __eq__(self, other):
        f = lent_kit.frame_named("_state_problems", 0)
        if f is not None:
            f.f_locals["problems"].clear()
        return False
if WORKER is not None:
    d = WORKER.__dict__
    v = d.pop("sets")
    d[Key()] = 0
    d["sets"] = v
    WORKER.collect = _collect
