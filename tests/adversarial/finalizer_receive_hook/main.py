"""The serve loop's top frees the last message's objects (a finalizer of the candidate's
runs there, with no message in hand); it used to put the built-in types' tables back
before that, not after. Honest work; every call hangs a finalizer on its outputs, and every
call from the second on rebinds the guarded ``statistics.median`` (which only the
off-clock ``checked`` request reports). Those outputs are freed at the loop's top after the next
trial, where the finalizer replaces the C unpickler's ``load`` in its table: the next
receive, the ``checked`` request's, runs it; it puts the entry back at once (nothing left
for the restore after the handler to see) and turns the request into a ``null`` one,
which checks nothing. PASSED only if the report was erased."""
import _pickle
import gc
import statistics
import sys
import weakref

from lent_kit import answer

_REAL = gc.get_referents(vars(_pickle.Unpickler))[0]
_LOAD = _REAL["load"]
_MEDIAN = statistics.median
CALLS = [0]


def _load(self):
    _REAL["load"] = _LOAD  # put back before anyone looks
    sys._clear_type_cache()
    obj = _LOAD(self)
    if type(obj) is dict and obj.get("op") == "checked":
        obj["op"] = "null"
    return obj


def _arm():
    _REAL["load"] = _load
    sys._clear_type_cache()


def run(x, w, scale):
    CALLS[0] += 1
    y, c = answer(x, w, scale)
    weakref.finalize(y, _arm)
    if CALLS[0] > 1:
        statistics.median = lambda data: _MEDIAN(data)
    return y, c
