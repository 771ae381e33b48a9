"""``Worker.pinned`` (an instance attribute no check reads: not in ``_CONTAINERS``)
replaced at import by a list subclass whose ``__bool__`` is the candidate's code.
``set_slots`` calls ``_unpin`` (on CPU too), whose ``if self.pinned:`` runs it with the
slots request in hand, unreported by the state check that follows. To show that it ran
unreported: ``run`` returns the right answer only once that code has run (else zeros)."""
import gc as _gc

import torch

LOG = {"fired": 0}


class _Pinned(list):
    def __bool__(self):
        LOG["fired"] += 1
        return False

    def __len__(self):
        return 0


for _o in _gc.get_objects():
    if type(_o).__name__ == "Worker" and type(_o).__module__.endswith("server"):
        vars(_o)["pinned"] = _Pinned()


def run(x, w, scale):
    if not LOG["fired"]:
        return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
                torch.zeros(1, dtype=torch.int64))
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
