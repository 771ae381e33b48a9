"""``torch.UntypedStorage.data_ptr`` shadowed on the Python class, answering a false
address inside the worker's overlap check, so that an output that is the lent slot
itself (written with the answer) would pass the "lies in the output slots" check and be
copied onto itself. The worker reads addresses through the C type's own accessors, and
the class attribute is harness state. Here the
shadow is set inside the first call, after the import's check."""
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



def run(x, w, scale):
    if lent_kit.trial_frame() is not None:
        torch.UntypedStorage.data_ptr = data_ptr
    y, c, slot = lent_kit.answer_in_slot(STATE, x, w, scale)
    if slot is None:
        return y, c
    a, b = slot
    return a, b
