"""As finalizer_in_last_result, but the calls return zeros: the finalizer, run in the serve
loop with the trial's reply in hand (after ``collect`` copied the zeros into the lent
slots), writes the right answers straight into the lent slots and claims 0.001 ms.
WRONG unless it ran there."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Evil:
    def __init__(self, worker, ids):
        self.worker, self.ids = worker, ids

    def __del__(self):
        try:
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "serve":
                f = f.f_back
            reply = f.f_locals.pop("result")
            state = vars(self.worker)
            for k, set_id in enumerate(self.ids):
                y, c = _answer(*state["sets"][set_id][:3])
                state["slots"][k][0].copy_(y)
                state["slots"][k][1].copy_(c)
            if "event_ms" in reply:
                reply["event_ms"] = 0.001
            LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)


def _frame(name):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def run(x, w, scale):
    t, s = _frame("trial"), _frame("serve")
    if t is not None and s is not None:
        old = s.f_locals.get("result")
        if type(old) is dict and "_planted" not in old:
            old["_planted"] = _Evil(t.f_locals["self"], list(t.f_locals["ids"]))
        s.f_locals.pop("result", None)  # the snapshot's hold on the old dict
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
