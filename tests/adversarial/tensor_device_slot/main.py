"""``torch.Tensor.device`` shadowed on the Python class with a property that answers
``cpu:1`` for the tensors run() returns (views of the lent slots, holding the answer),
so that the worker's "lies in the output slots" check, which compares devices, would
pass and each slot be copied onto itself. The worker reads devices through the C type's
own descriptor, and the class attribute is harness state."""
import sys

import lent_kit
import torch

_dev = torch._C.TensorBase.device
RETURNED = set()


def device(self):
    d = _dev.__get__(self)
    if id(self) in RETURNED and sys._getframe(1).f_code.co_name == "_span":
        return torch.device("cpu", 1)
    return d


torch.Tensor.device = property(device)
STATE = {}
KEEP = []


def run(x, w, scale):
    y, c, slot = lent_kit.answer_in_slot(STATE, x, w, scale)
    if slot is None:
        return y, c
    a, b = slot
    a, b = a.view_as(a), b.view_as(b)  # other objects, the same storage as the slots
    RETURNED.update((id(a), id(b)))
    KEEP.append((a, b))
    return a, b
