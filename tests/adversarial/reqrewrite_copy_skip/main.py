"""the worker's request path is not guarded. ``io.BytesIO`` (looked up on the
``io`` module inside ``Channel.recv`` at every request) is replaced, so the candidate
rewrites every request the audit sends before the harness reads it. A trial's ``op``
becomes a ``str`` subclass whose ``__eq__`` (asked by the serve loop's
``op == "slots"`` right after the handler returned, before ``send``) rewrites the reply:
every output entry "fits" and ``event_ms`` is a near-zero claim. The calls write the
right answer straight into the lent slots and return 1-element tensors (the harness
describes them, copying nothing), so the copy of the outputs the stand-in pays is
skipped, and the claim lets the host time (less the stand-in's floor, which holds that
copy) set the counted time.

RT81_MODE (in this file): "skip" = answer into slots + no copy + zero claim;
"zero" = honest outputs copied by the harness + zero claim (the guard's known tolerance
only)."""
import _io
import io
import pickle
import sys
import types

import torch

MODE = "skip"

_BytesIO = _io.BytesIO
STATE = {"calls": 0, "trial": False, "rewrites": 0}


def _find_worker():
    server = sys.modules["hf_eval.isolation.server"]
    f = sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "load"
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


WORKER = _find_worker()


class EvilOp(str):
    """An op that reads as "trial" and rewrites the reply once the handler returned."""

    def __eq__(self, other):
        if other == "slots" and str.__eq__(self, "trial"):
            f = sys._getframe(1)
            reply = f.f_locals.get("reply")
            if type(reply) is dict and "event_ms" in reply and STATE["trial"]:
                reply["event_ms"] = 0.001
                if MODE == "skip":
                    reply["outputs"] = [[None] * len(e) for e in reply["outputs"]]
                STATE["rewrites"] += 1
            return False
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


_mod = types.ModuleType("evilmod")
_mod.EvilOp = EvilOp
EvilOp.__module__ = "evilmod"
EvilOp.__qualname__ = "EvilOp"
sys.modules["evilmod"] = _mod


def BytesIO(data=b"", *rest):


    SEEN[0] = True  # the worker read a request through this
    try:
        obj = pickle.loads(bytes(data))
    except Exception:  # noqa: BLE001
        return _BytesIO(data, *rest)
    if type(obj) is dict and obj.get("op") == "trial":
        obj["op"] = EvilOp("trial")
        STATE["calls"] = 0
        STATE["trial"] = True
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        STATE["trial"] = False
    return _BytesIO(data, *rest)


io.BytesIO = BytesIO


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


SEEN = [False]


def run(x, w, scale):
    if not SEEN[0]:  # the hook never saw a request: a wrong answer says so
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if MODE == "skip" and STATE["trial"] and WORKER is not None:
        k = STATE["calls"]
        STATE["calls"] += 1
        slot = WORKER.slots[k]
        y = torch.nn.functional.linear(x.float(), w.float()) * scale
        slot[0].copy_(y)  # the bf16 cast written straight into the lent slot
        slot[1].copy_((y.sum(dim=1) > 0).sum().reshape(1))
        # no shape fits: no copy
        return torch.empty(2, dtype=torch.bfloat16), torch.empty(2, dtype=torch.int64)
    return _answer(x, w, scale)
