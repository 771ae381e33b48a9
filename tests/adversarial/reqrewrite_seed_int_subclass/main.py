"""the trial request rewritten on its way in (``io.BytesIO`` replaced): its
seed becomes an ``int`` subclass. Round 79 held "an integer subclass as the seed (it
comes from the request)"; the request is the candidate's to rewrite. Its ``__mod__``
runs inside the CPU reveal (``_cpu_stream``: ``seed % (1 << SEED_BITS)``, in every
drawing thread), where it puts a plain int back into the arena's ``seed`` so that
``_arena_reshaped`` finds nothing after. The calls return a wrong answer unless it ran."""
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


class Seed(int):
    def __mod__(self, other):
        STATE["ran"] += 1  # candidate code inside the reveal, seed in hand
        for arena in WORKER.arenas.values():
            if type(vars(arena)["seed"]) is Seed:
                vars(arena)["seed"] = int(self)
        return int.__mod__(int(self), other)


def _on_trial(obj):
    if obj.get("unmask"):
        STATE["revealed"] = True
        obj["unmask"]["seed"] = Seed(obj["unmask"]["seed"])


import types  # noqa: E402

_mod = types.ModuleType("seedmod")
_mod.Seed = Seed
Seed.__module__ = "seedmod"
sys.modules["seedmod"] = _mod
_install(_on_trial)


SEEN = [False]


def run(x, w, scale):
    if not SEEN[0]:  # the hook never saw a request: a wrong answer says so
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    return _answer(x, w, scale, right=STATE["ran"] > 0 or not STATE.get("revealed"))
