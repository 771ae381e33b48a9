"""Changes the class of the ``gc`` module so that the state check's read of its namespace
runs code that empties the findings (``worker.collect`` replaced). What the check reads
of other modules is bound at import."""
import gc

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
run = lent_kit.slot_writing_run(WORKER)
EvilMod = lent_kit.problems_clearing_module("__dict__")
if WORKER is not None:
    gc.__class__ = EvilMod
    WORKER.collect = _collect
