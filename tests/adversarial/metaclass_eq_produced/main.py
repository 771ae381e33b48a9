"""A check that took a call's outputs as a plain tuple or list when
`type(produced) in (tuple, list)` would ask a metaclass's `__eq__` (True for any class):
`tuple(produced)` then iterates the candidate's object inside `collect`, inside the
clock, after the state check (the comment there says its iteration would be candidate
code). The iteration writes the right answer straight into the call's lent slot and
yields fresh tensors holding the same answer: does the harness still copy (it should:
no gain), and is code running there reported?"""
import sys

import torch


def _find_worker():
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if type(me).__name__ == "Worker":
            return me
        frame = frame.f_back
    return None


WORKER = _find_worker()
iterated = [0]


class Anything(type):
    def __eq__(cls, other):
        return True

    __hash__ = type.__hash__


class Outs(metaclass=Anything):
    def __init__(self, y, c):
        self.y, self.c = y, c

    def __iter__(self):
        iterated[0] += 1
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "collect":
            f = f.f_back
        if f is not None:
            index = f.f_locals.get("index")
            lent = f.f_locals.get("lent")
            if lent is not None and index is not None and index < len(lent):
                lent[index][0].copy_(self.y)
                lent[index][1].copy_(self.c)
        return iter((self.y, self.c))


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return Outs(y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64))
