"""Replaces ``builtins.zip`` and ``threading.gettrace``: the hook check called it inside
the checks, so the replacement ran there and emptied the list of findings. The readers
of the hooks must be bound before any candidate code."""
import threading

import lent_kit

run = lent_kit.reader_clearing_run(threading, "gettrace")
