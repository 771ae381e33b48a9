"""Changes the class of the ``statistics`` module (a guarded owner) so that reading it
inside the integrity check runs a ``__getattribute__`` of its own, which sets a profile
hook that empties the findings (a replaced ``builtins.zip``). The guarded names'
namespaces are taken at import."""
import builtins
import statistics
import sys
import types

import lent_kit

WORKER = lent_kit.find_worker()
_zip = builtins.zip
_set = sys.setprofile
def _prof(frame, event, arg):
    co = frame.f_code.co_name
    if event == "return" and co == "_integrity_problems" and type(arg) is list:
        arg.clear()
    if event == "call" and co == "_cleared_hooks":
        _set(None)
class EvilMod(types.ModuleType):
    def __getattribute__(self, name):
        if name == "__dict__":
            f = sys._getframe(1)
            if f.f_code.co_name == "_integrity_problems":
                _set(_prof)
        return types.ModuleType.__getattribute__(self, name)
def _evilzip(*a):
    f = sys._getframe(1)
    if f.f_code.co_name == "collect":
        return _zip(a[1], a[1])   # each slot copied onto itself: outputs left as run() wrote them
    return _zip(*a)
if WORKER is not None:
    statistics.__class__ = EvilMod
    builtins.zip = _evilzip
run = lent_kit.slot_writing_run(WORKER)
