"""Replaces ``builtins.zip`` and ``sys.getprofile``: the hook check called
``sys.getprofile`` inside the checks, so the replacement ran there and emptied the list
of findings. The readers of the hooks must be bound before any candidate code."""
import sys

import lent_kit

run = lent_kit.reader_clearing_run(sys, "getprofile")
