"""As lent_record_element_eq, with each element of the (exact) ``lent`` tuple a tuple SUBCLASS
holding the same two ints: the subclass's ``__eq__`` is tried first (reflected, a subclass of the
left operand's type) in ``_state_problems``' ``tuple(...) != state["lent"]`` inside
collect. It fills the zeros and puts the original record back. WRONG unless it ran there."""
import sys as _sys

import torch

LOG = {"fired": 0}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _Pair(tuple):
    __hash__ = tuple.__hash__

    def __eq__(self, other):
        f = _sys._getframe(1)
        while f is not None and f.f_code.co_name != "collect":
            f = f.f_back
        if f is not None:
            state = vars(f.f_locals["self"])
            original = _ORIG.get("lent")
            if original is not None and state.get("lent") is not original:
                state["lent"] = original
                for set_id, outs in state["produced"]:
                    y, c = _answer(*state["sets"][set_id][:3])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                LOG["fired"] += 1
        return tuple(self) == tuple(other)

    def __ne__(self, other):
        return not self.__eq__(other)


_ORIG = {}


def run(x, w, scale):
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_name != "trial":
        f = f.f_back
    if f is not None:
        state = vars(f.f_locals["self"])
        lent = state["lent"]
        if lent and type(lent[0]) is tuple:
            _ORIG["lent"] = lent
            state["lent"] = tuple(_Pair(p) for p in lent)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
