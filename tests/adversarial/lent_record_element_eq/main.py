"""``Worker.lent`` (the record of the lent slots) replaced by a plain tuple whose elements
are objects of the candidate's: ``_state_problems`` (called in ``collect`` WITHOUT the serve
loop's ``lent``, so no identity check there) compares ``tuple(...) != state["lent"]``, which
runs the element's reflected ``__eq__`` inside collect, before the copies. That code fills
the zeros the calls returned and puts the original record back (the later ``checked``
sees the original object). WRONG unless it ran there."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _frame(name, depth=1):
    f = _sys._getframe(depth)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


class _Evil:
    __hash__ = object.__hash__

    def __init__(self, worker, original, pair):
        self.worker, self.original, self.pair = worker, original, pair

    def __eq__(self, other):
        state = vars(self.worker)
        if state.get("lent") is not self.original:
            state["lent"] = self.original
            try:
                for set_id, outs in state["produced"]:
                    y, c = _answer(*state["sets"][set_id][:3])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
            except BaseException as exc:  # noqa: BLE001
                LOG["err"] = repr(exc)
        return other == self.pair

    def __ne__(self, other):
        return not self.__eq__(other)


def run(x, w, scale):
    f = _frame("trial", 2)
    if f is not None:
        worker = f.f_locals["self"]
        state = vars(worker)
        lent = state["lent"]
        if type(lent) is tuple and lent and type(lent[0]) is tuple:
            state["lent"] = tuple(_Evil(worker, lent, p) for p in lent)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
