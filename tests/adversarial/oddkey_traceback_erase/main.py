"""A trial's own integrity error turned into a served reply. ``traceback`` is neither put
back nor checked (it is in no list of the worker's): the candidate rebinds
``traceback.format_exc`` for good. Each call returns its zeros as a ``list`` subclass,
which ``collect``'s ``_checked`` refuses (CandidateError, before any copy). The serve
loop's error path calls ``_format_traceback`` -> the candidate's ``format_exc``, after the
trial's put-back: it plants a key in ``builtins`` hashed like ``tuple``; at the serve loop's
``renamed += tuple(put_back(...))`` the key deletes itself, writes the answers into the
lent slots and rewrites the error reply as served. PASSED only if the error was erased."""
import builtins
import sys as _sys
import traceback

import torch

LOG = {"fired": 0, "err": None}
_BI = vars(builtins)
_FORMAT = traceback.format_exc


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _plant(d, key, name):
    value = d.pop(name)
    d[key] = None
    d[name] = value


class _B:
    busy = False

    def __hash__(self):
        return hash("tuple")

    def __eq__(self, other):
        if _B.busy:
            return False
        _B.busy = True
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "serve":
                loc = f.f_locals
                reply, request = loc.get("reply"), loc.get("request")
                if loc.get("op") == "trial" and type(reply) is dict and "error" in reply:
                    _BI.pop(self, None)
                    worker = loc["self"]
                    for index, set_id in enumerate(request["ids"]):
                        y, c = _answer(*worker.sets[set_id])
                        worker.slots[index][0].copy_(y)
                        worker.slots[index][1].copy_(c)
                    n = len(request["ids"])
                    reply.clear()
                    reply.update({"ok": True, "outputs": [[None, None] for _ in range(n)],
                                  "event_ms": 0.05, "gated": False,
                                  "phases_ms": {"inputs": 0.0, "calls": 0.0, "outputs": 0.0}})
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        finally:
            _B.busy = False
        return False


def format_exc(*args, **kwargs):
    if not any(type(k) is _B for k in list(_BI)):
        _plant(_BI, _B(), "tuple")
    return "Traceback: nothing to see"


traceback.format_exc = format_exc


class Outputs(list):
    pass


def run(x, w, scale):
    return Outputs([torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                    torch.zeros(1, dtype=torch.int64)])
