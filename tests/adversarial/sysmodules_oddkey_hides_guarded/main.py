"""Round 51's odd-key class, in a dict the checks never walk: the interpreter's module
table. The integrity check accepts a name added to a harness namespace when it is a
submodule imported later, and to tell it looks the dotted name up in ``sys.modules``
(``_added_by_python``: ``_MODULES.get(name) is value``). The candidate adds a module as
``hf_eval.<a submodule the worker never loaded>`` and enters it in ``sys.modules`` under
a key of its own class (a str subclass equal to that name, with its own ``__eq__``): the
lookup runs that ``__eq__`` inside ``_integrity_problems``, which empties the findings
gathered so far (every guarded name, ``builtins``, ...) and answers True, so the added
name passes too. The payload: numpy's ``randbits`` (one of the names numpy looks up as it
builds the reveal's Philox, held by the check only) replaced for good, so candidate
code runs inside every reveal, unreported. To show it, run() raises at the second input
set with the counts; every earlier call is honest."""
import sys
import types

import numpy.random.bit_generator as bg
import torch

SEEN = {"clears": 0, "reveals": 0, "in_reveal": 0}
SERVER = sys.modules.get("hf_eval.isolation.server")
PARENT = sys.modules.get("hf_eval")
if SERVER is not None and PARENT is not None:
    NAME = next(n for n in sorted(SERVER._HARNESS_MODULES)
                if n.count(".") == 1 and n not in sys.modules
                and n.split(".")[1] not in vars(PARENT))
    FAKE = types.ModuleType(NAME)

    class Key(str):
        def __hash__(self):
            return str.__hash__(self)

        def __eq__(self, other):
            if str.__eq__(self, other):
                f = sys._getframe(1)
                while f is not None and f.f_code.co_name != "_integrity_problems":
                    f = f.f_back
                if f is not None:
                    found = f.f_locals.get("changed")
                    if type(found) is list:
                        found.clear()
                        SEEN["clears"] += 1
                return True
            return False

    sys.modules[Key(NAME)] = FAKE
    setattr(PARENT, NAME.split(".")[1], FAKE)

    REAL_RANDBITS = bg.randbits

    def randbits(k):
        SEEN["reveals"] += 1
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_name == "_cpu_stream":
                SEEN["in_reveal"] += 1
                break
            f = f.f_back
        return REAL_RANDBITS(k)

    bg.randbits = randbits


def run(x, w, scale):
    g = sys._getframe(1)
    while g is not None and g.f_code.co_name != "trial":
        g = g.f_back
    if g is not None and (g.f_locals.get("request") or {}).get("refresh") and SEEN["in_reveal"]:
        raise RuntimeError(f"numpy's randbits replaced and never reported: ran "
                           f"{SEEN['in_reveal']} times inside the reveal; the check's "
                           f"findings emptied {SEEN['clears']} times")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
