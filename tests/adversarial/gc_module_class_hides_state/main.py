"""Changes the class of the ``gc`` module so that the state check's read of its namespace
runs code that empties the findings (``worker.collect`` replaced). What the check reads
of other modules is bound at import."""
import gc
import sys
import types

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
run = lent_kit.slot_writing_run(WORKER)
class EvilMod(types.ModuleType):
    def __getattribute__(self, name):
        if name == "__dict__":
            f = sys._getframe(1)
            if f.f_code.co_name == "_state_problems":
                f.f_locals["problems"].clear()
        return types.ModuleType.__getattribute__(self, name)
if WORKER is not None:
    gc.__class__ = EvilMod
    WORKER.collect = _collect
