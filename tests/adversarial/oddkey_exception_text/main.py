"""A call that raises is answered as served. The call raises an exception whose ``__str__``
(run by the serve loop's ``_one_line`` after ``trial``'s put-back, before the serve loop's)
plants a key of the candidate's class in ``builtins``, hashed like ``tuple`` and ahead of it.
The serve loop's ``renamed += tuple(put_back(...))`` runs the key's ``__eq__`` with the
error reply in hand: it deletes itself (so the put-back finds ``builtins`` as it was),
computes the answers into the lent slots and turns the reply into a served one (every
output "in its slot", ``event_ms`` from the harness's own clock is gone: it writes 0.05).
The call itself does no work at all. PASSED only if the key ran."""
import builtins
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}
_BI = vars(builtins)


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


class Boom(Exception):
    def __str__(self):
        if not any(type(k) is _B for k in list(_BI)):
            _plant(_BI, _B(), "tuple")
        return "boom"


def run(x, w, scale):
    raise Boom()
