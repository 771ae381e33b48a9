"""No thread, no ctypes, no signal, no profile, no name rebound. ``Channel.restricted`` (an
instance attribute no check reads) replaced by a falsy object: ``Channel.recv`` reads it
after the whole request body is in its local ``data`` (a bytearray) and before it is
unpickled, so ``__bool__`` rewrites the request bytes in place: a trial's ``unmask`` (the
reveal) and ``flush`` (the cold trial's L2 eviction, on CUDA) are dropped before the
serve loop ever sees the request. The candidate unmasks the arena itself in its call.
WRONG unless the request was rewritten (a call whose request still carries ``unmask``
returns zeros)."""
import pickle
import sys as _sys

import torch

from hf_eval.isolation.reveal import unmask_words

LOG = {"fired": 0, "err": None}
PENDING = {}


class _Falsy:
    def __bool__(self):
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "recv":
                loc = f.f_locals
                data, length = loc.get("data"), loc.get("length")
                if type(data) is bytearray and data and len(data) == length:
                    req = pickle.loads(bytes(data))
                    if type(req) is dict and req.get("op") == "trial" and req.get("unmask"):
                        PENDING.update(req["unmask"])
                        req["unmask"] = None
                        req["flush"] = 0
                        data[:] = pickle.dumps(req, protocol=pickle.HIGHEST_PROTOCOL)
                        LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    sf = _serve_frame()
    loc = sf.f_locals
    worker, req = loc["self"], loc["request"]
    ch = vars(worker.channel)
    if type(ch.get("restricted")) is not _Falsy:
        ch["restricted"] = _Falsy()
    if type(req) is dict and req.get("unmask"):  # the harness revealed: the hook failed
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    if PENDING:
        arena = worker.arenas[PENDING["arena"]]
        unmask_words(vars(arena)["words"], PENDING["seed"])
        vars(arena)["seed"] = PENDING["seed"]
        PENDING.clear()
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
