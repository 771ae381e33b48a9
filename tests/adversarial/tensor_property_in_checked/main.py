"""Sets a property ``torch.Tensor.is_meta`` that runs inside the worker's output check,
after its state check: it points the lent slot tensors at scratch memory (so the
harness's copies of ``run``'s garbage land there) and plants an instance ``_sync`` that
points them back and removes itself; ``run`` writes the right answers into the slots.
The output path reads a tensor through the C accessors bound at import and calls
nothing through the instance: the property never runs, the garbage is judged."""
import sys

import torch
from lent_kit import find_worker, slot_writing_run

WORKER = find_worker()
_is_meta = torch._C.TensorBase.is_meta.__get__
SAVED = []


def _restore():
    del WORKER.__dict__["_sync"]
    for tensor, (storage, offset, size, stride) in SAVED:
        tensor.set_(storage, offset, size, stride)
    SAVED.clear()


def _is_meta_hook(self):
    f = sys._getframe(1)
    caller = f.f_back
    if (f.f_code.co_name == "_checked" and not SAVED and caller is not None
            and caller.f_code.co_name == "collect"):
        for slot in caller.f_locals["lent"]:
            for t in slot:
                SAVED.append((t, (t.untyped_storage(), t.storage_offset(), t.size(),
                                  t.stride())))
                t.set_(torch.empty_like(t))
        WORKER.__dict__["_sync"] = _restore
    return _is_meta(self)


torch.Tensor.is_meta = property(_is_meta_hook)
run = slot_writing_run(WORKER)
