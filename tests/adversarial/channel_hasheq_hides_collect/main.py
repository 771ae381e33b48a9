"""Adds to the channel's attributes a key that is not a str, with the hash of a real name,
whose ``__eq__`` empties the state check's findings when a lookup meets it; meanwhile
``worker.collect`` is replaced. Names that are not exactly str are reported before any
lookup."""
import sys

import lent_kit

WORKER = lent_kit.find_worker()
STATS = {"eq": 0}
class Key:
    def __hash__(self): return hash("send")
    def __eq__(self, other):
        STATS["eq"] += 1
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "_state_problems":
            f = f.f_back
        if f is not None:
            f.f_locals["problems"].clear()
        return False
_collect = lent_kit.emptying_collect(WORKER)
if WORKER is not None:
    WORKER.channel.__dict__[Key()] = 1
    WORKER.collect = _collect
run = lent_kit.slot_writing_run(WORKER)
