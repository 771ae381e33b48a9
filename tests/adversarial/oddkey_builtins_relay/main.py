"""No thread, no ctypes, no signal, nothing left rebound. ``_put_back`` reports a key that
is not a str only if it is still in a namespace when the put-back counts that namespace
(``_len(namespace) == _len(items)``); and it scans ``builtins`` first. The candidate's call
plants key A (hash of the server module's name ``WARM_HEAD_DIMS``, ahead of the real entry
in the probe sequence) in ``hf_eval.isolation.server``'s namespace. In ``trial``'s put-back,
``namespace.get("WARM_HEAD_DIMS")`` runs A's ``__eq__``: A deletes itself (so the server
namespace counts right) and plants key B in ``builtins`` (already scanned), hashed like
``tuple`` and ahead of it. Every later ``tuple`` lookup in the worker runs B's ``__eq__``;
the one in the serve loop's ``renamed += tuple(put_back(...))`` comes after ``collect``'s
copies, with the reply built: B deletes itself and writes the right answers into the lent
slots. The calls return zeros. WRONG unless the relay ran."""
import builtins
import sys as _sys

import torch

LOG = {"a": 0, "b": 0, "err": None}
_BI = vars(builtins)
_SRV = _sys.modules["hf_eval.isolation.server"]
_SD = vars(_SRV)


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
                if type(reply) is dict and "outputs" in reply:
                    _BI.pop(self, None)
                    worker = loc["self"]
                    for index, set_id in enumerate(request["ids"]):
                        y, c = _answer(*worker.sets[set_id])
                        worker.slots[index][0].copy_(y)
                        worker.slots[index][1].copy_(c)
                    LOG["b"] += 1
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
            f = _sys._getframe(1)
            if f.f_code.co_name == "_put_back":
                _SD.pop(self, None)
                _plant(_BI, _B(), "tuple")
                LOG["a"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def run(x, w, scale):
    _plant(_SD, _A(), "WARM_HEAD_DIMS")
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
