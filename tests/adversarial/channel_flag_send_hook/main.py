"""No thread, no ctypes, no signal, no profile, no module or class name rebound.
``Channel.restricted`` is a plain instance attribute of the worker's channel that no check
looks at (the shadow check compares instance names with ``dir(Channel)``, the socket is
checked by identity, ``restricted`` by nothing). The candidate replaces it with a falsy
object of its own class: ``Channel.send`` reads ``if self.restricted:`` with the reply in
hand, after every check and the last put-back, so ``__bool__`` runs there. At a trial's
reply it writes the right answer into the lent slots (the calls returned zeros, which
the harness copied). WRONG unless the hook ran in ``send``."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}
PENDING = []


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Falsy:
    def __init__(self, worker):
        self.worker = worker

    def __bool__(self):
        try:
            f = _sys._getframe(1)
            if f.f_code.co_name == "send" and PENDING:
                obj = f.f_locals.get("obj")
                if type(obj) is dict and "event_ms" in obj:
                    for index, inputs in enumerate(PENDING):
                        y, c = _answer(*inputs)
                        self.worker.slots[index][0].copy_(y)
                        self.worker.slots[index][1].copy_(c)
                    LOG["fired"] += 1
                PENDING.clear()
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return False


def _serve_frame():
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "serve":
        f = f.f_back
    return f


def run(x, w, scale):
    worker = _serve_frame().f_locals["self"]
    ch = vars(worker.channel)
    if type(ch.get("restricted")) is not _Falsy:
        ch["restricted"] = _Falsy(worker)
    PENDING.append((x, w, scale))
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
