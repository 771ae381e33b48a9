"""Changes the class of the ``socket`` module so that the state check's read of
``socket.socket`` runs code that empties the findings (``worker.collect`` replaced).
What the check reads of other modules is bound at import."""
import socket
import sys
import types

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
run = lent_kit.slot_writing_run(WORKER)
class EvilMod(types.ModuleType):
    def __getattribute__(self, name):
        if name == "socket":
            f = sys._getframe(1)
            if f.f_code.co_name == "_state_problems":
                f.f_locals["problems"].clear()
        return types.ModuleType.__getattribute__(self, name)
if WORKER is not None:
    socket.__class__ = EvilMod
    WORKER.collect = _collect
