"""oddkey_builtins_relay's route (a self-removing key in the server namespace, relayed in
``trial``'s put-back to a key in ``builtins`` hashed like ``tuple``), used to skip the
worker's own part and forge the claim. The calls compute honestly. At ``collect``'s first
``tuple`` lookup (``lent = [tuple(slot) ...]``, before its checks and copies) the key copies
the calls' results into the lent slots itself and raises ``torch.OutOfMemoryError`` (the
serve loop's OOM path formats no traceback); at the serve loop's ``tuple`` lookup it
deletes itself and rewrites the error reply into a served one: every output "in its
slot", ``event_ms`` 0.001. Expected if it escapes: PASSED, counted near 0.001 ms."""
import builtins
import sys as _sys

import torch

LOG = {"a": 0, "skip": 0, "forge": 0, "err": None}
_BI = vars(builtins)
_SD = vars(_sys.modules["hf_eval.isolation.server"])
_OOM = torch.OutOfMemoryError
_COPY = torch._C.TensorBase.copy_


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
            name = f.f_code.co_name
            if name == "<listcomp>" and f.f_back.f_code.co_name == "collect":
                t = f.f_back.f_back  # trial
                loc = t.f_locals
                worker, results = loc["self"], loc["results"]
                for index, outs in enumerate(results):
                    _COPY(worker.slots[index][0], outs[0])
                    _COPY(worker.slots[index][1], outs[1])
                LOG["skip"] += 1
                _B.busy = False
                raise _OOM("skip")
            if name == "serve":
                loc = f.f_locals
                reply, request = loc.get("reply"), loc.get("request")
                if loc.get("op") == "trial" and type(reply) is dict:
                    _BI.pop(self, None)
                    n = len(request["ids"])
                    reply.clear()
                    reply.update({"ok": True, "outputs": [[None, None] for _ in range(n)],
                                  "event_ms": 0.001, "gated": False,
                                  "phases_ms": {"inputs": 0.0, "calls": 0.0,
                                                "outputs": 0.0}})
                    LOG["forge"] += 1
        except _OOM:
            raise
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        finally:
            _B.busy = False
        return False


class _A:
    def __hash__(self):
        return hash("WARM_HEAD_DIMS")

    def __eq__(self, other):
        try:
            if _sys._getframe(1).f_code.co_name == "_put_back":
                _SD.pop(self, None)
                _plant(_BI, _B(), "tuple")
                LOG["a"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def run(x, w, scale):
    _plant(_SD, _A(), "WARM_HEAD_DIMS")
    return _answer(x, w, scale)
