"""Control for abcmeta_delattr_fill: the same calls (zeros) with the trap never armed; must fail.
through a metaclass no table restore or put-back covers: ``abc.ABCMeta``.

``numpy.random.bit_generator.ISeedSequence`` is on the message path (a heap class of a
``_MESSAGE_PATH`` module), and its metaclass is ``abc.ABCMeta``, whose namespace nothing
restores. Each trial's first call adds a name ``x`` to ``ISeedSequence`` (plain class
attribute) and then puts a ``property`` of that name on ``ABCMeta``: a data descriptor of
the metaclass. The put-back in ``Worker.trial``'s ``finally`` finds the added name and
removes it with ``type.__delattr__(ISeedSequence, 'x')``, which, through the generic
set-attribute path, calls the metaclass descriptor's ``fdel``: the candidate's code, after
the clock stopped. There it removes the descriptor and the name, computes every call's
answer into the outputs the calls returned (the calls did no work: zero
tensors), and empties the put-back's ``changed`` list through its frame, so nothing is
reported."""
import abc
import sys

import numpy.random.bit_generator as _bg
import torch

_NAME = "x"
_ISS = _bg.ISeedSequence
PENDING = []
STATE = {"armed": False, "fired": 0}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _fdel(cls):
    # disarm: the descriptor first, then the class's own name
    type.__delattr__(abc.ABCMeta, _NAME)
    if _NAME in vars(cls):
        type.__delattr__(cls, _NAME)
    STATE["armed"] = False
    STATE["fired"] += 1
    for x, w, scale, y, c in PENDING:
        ay, ac = _answer(x, w, scale)
        y.copy_(ay)
        c.copy_(ac)
    PENDING.clear()
    f = sys._getframe(1)
    if f.f_code.co_name == "_put_back":
        f.f_locals["changed"].clear()


def _arm():
    if STATE["armed"]:
        return
    type.__setattr__(_ISS, _NAME, 1)
    abc.ABCMeta.x = property(None, None, _fdel)
    STATE["armed"] = True


def run(x, w, scale):
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    PENDING.append((x, w, scale, y, c))
    pass  # control: never armed
    return y, c
