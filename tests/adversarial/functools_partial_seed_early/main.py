"""``functools.partial`` (looked up on the ``functools`` module by
``Channel.recv`` for every body read) replaced by a subclass whose ``__call__`` sees the
raw bytes of every request as they are read, before the harness unpickles them: the
trial's seed is the candidate's before the harness's reveal starts. The calls return a
wrong answer unless the seed taken from the raw bytes is the one the reveal then used."""
import functools
import pickle
import sys

import torch

_partial = functools.partial
RAW = {}


class Partial(_partial):
    def __call__(self, *a, **k):
        out = _partial.__call__(self, *a, **k)
        if getattr(self.func, "__name__", "") == "recv" and type(out) is bytes \
                and b"unmask" in out:
            RAW["body"] = out
        return out


functools.partial = Partial


def _find_worker():
    server = sys.modules["hf_eval.isolation.server"]
    f = sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "load"
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


WORKER = _find_worker()
MATCHED = {"n": 0}


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    body = RAW.get("body")
    if body is not None:
        try:
            req = pickle.loads(body)
            unmask = req.get("unmask")
            if unmask:
                if vars(WORKER.arenas[unmask["arena"]])["seed"] == unmask["seed"]:
                    MATCHED["n"] += 1
                else:
                    y = -y
        except Exception:  # noqa: BLE001
            pass
    elif WORKER is not None and any(vars(a)["seed"] is not None for a in WORKER.arenas.values()):
        y = -y  # a revealed trial whose body the wrapper never saw: a wrong answer
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
