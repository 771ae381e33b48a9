"""Changes the class of the ``socket`` module so that the state check's read of
``socket.socket`` runs code that empties the findings (``worker.collect`` replaced).
What the check reads of other modules is bound at import."""
import socket

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
run = lent_kit.slot_writing_run(WORKER)
EvilMod = lent_kit.problems_clearing_module("socket")
if WORKER is not None:
    socket.__class__ = EvilMod
    WORKER.collect = _collect
