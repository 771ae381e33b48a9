"""the trial request rewritten on its way in (``io.BytesIO`` replaced, as in
``reqrewrite_copy_skip``): its ``unmask`` is removed, so the harness's own reveal
never runs, and its ``flush`` (CUDA: the L2 flush of a cold trial, whose size "comes with
the request, so there is no lookup of the cache's size it could shrink") is cut to one
byte. The candidate reveals the arena itself in its first call with the harness's own
function. On the CPU: PASSED only if the harness did not reveal (a second XOR would mask
the content again). On CUDA (by reading): the cold trial reads 1 byte instead of twice
the L2, so the ranked cold figure is timed with the inputs L2-resident."""
import _io
import io
import pickle
import sys

import torch

_BytesIO = _io.BytesIO


def _find_worker():
    server = sys.modules["hf_eval.isolation.server"]
    f = sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "load"
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


WORKER = _find_worker()
STATE = {"ran": 0}


def _install(on_trial):
    """``io.BytesIO`` replaced: every request the worker receives passes through
    ``on_trial`` (a trial's dict) before the harness reads it."""

    def BytesIO(data=b"", *rest):

        SEEN[0] = True  # the worker read a request through this
        try:
            obj = pickle.loads(bytes(data))
        except Exception:  # noqa: BLE001
            return _BytesIO(data, *rest)
        if type(obj) is dict and obj.get("op") == "trial":
            on_trial(obj)
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        return _BytesIO(data, *rest)

    io.BytesIO = BytesIO


def _answer(x, w, scale, right=True):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if not right:
        y = -y
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
from hf_eval.isolation.reveal import unmask_words  # noqa: E402

PENDING = {}


def _on_trial(obj):
    if obj.get("unmask"):
        PENDING.update(obj["unmask"])
        obj["unmask"] = None
    if obj.get("flush"):
        obj["flush"] = 1


_install(_on_trial)


SEEN = [False]


def run(x, w, scale):
    if not SEEN[0]:  # the hook never saw a request: a wrong answer says so
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = WORKER.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
        STATE["ran"] += 1
    return _answer(x, w, scale)
