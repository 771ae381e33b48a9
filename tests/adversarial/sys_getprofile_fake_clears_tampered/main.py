"""Replaces ``builtins.zip`` and ``sys.getprofile``: the hook check called
``sys.getprofile`` inside the checks, so the replacement ran there and emptied the list
of findings. The readers of the hooks must be bound before any candidate code."""
import builtins
import sys

import lent_kit

WORKER = lent_kit.find_worker()
_collect = lent_kit.emptying_collect(WORKER)
_zip = builtins.zip
run = lent_kit.slot_writing_run(WORKER)
_gp = sys.getprofile
def _fake():
    lent_kit.clear_tampered(1)
    return _gp()
if WORKER is not None:
    sys.getprofile = _fake
    builtins.zip = lent_kit.collect_zip
