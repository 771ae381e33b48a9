"""Changes the class of the ``gc`` module so that the state check's read of its namespace
runs code that empties the findings (``worker.collect`` replaced). What the check reads
of other modules is bound at import."""
import gc

import lent_kit

WORKER = lent_kit.find_worker()
run = lent_kit.slot_writing_run(WORKER)
lent_kit.swap_module_class(gc, "__dict__", WORKER)
