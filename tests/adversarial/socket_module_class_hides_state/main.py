"""Changes the class of the ``socket`` module so that the state check's read of
``socket.socket`` runs code that empties the findings (``worker.collect`` replaced).
What the check reads of other modules is bound at import."""
import socket

import lent_kit

WORKER = lent_kit.find_worker()
run = lent_kit.slot_writing_run(WORKER)
lent_kit.swap_module_class(socket, "socket", WORKER)
