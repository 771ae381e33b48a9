"""Replaces ``builtins.zip`` and ``threading.gettrace``: the hook check called it inside
the checks, so the replacement ran there and emptied the list of findings. The readers
of the hooks must be bound before any candidate code."""
import builtins
import threading

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
_zip = builtins.zip
run = lent_kit.slot_writing_run(WORKER)
_gt = threading.gettrace
def _fake():
    lent_kit.clear_tampered(1)
    return _gt()
if WORKER is not None:
    threading.gettrace = _fake
    builtins.zip = lent_kit.collect_zip
