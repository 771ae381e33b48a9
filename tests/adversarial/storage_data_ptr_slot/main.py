"""``torch.UntypedStorage.data_ptr`` shadowed on the Python class, answering a false
address inside the worker's overlap check, so that an output that is the lent slot
itself (written with the answer) would pass the "lies in the output slots" check and be
copied onto itself. The worker reads addresses through the C type's own accessors, and
the class attribute is harness state."""
import sys

import lent_kit
import torch

_original = torch._C.StorageBase.data_ptr
FAKE = [1 << 56]
STATE = {}


def data_ptr(self):
    frame = sys._getframe(1)
    if frame.f_code.co_name == "_span":
        FAKE[0] += 1 << 32
        return FAKE[0]
    return _original(self)


torch.UntypedStorage.data_ptr = data_ptr


def run(x, w, scale):
    y, c, slot = lent_kit.answer_in_slot(STATE, x, w, scale)
    if slot is None:
        return y, c
    a, b = slot
    return a, b
