"""Code inside every receive that maps a tensor, never reported. ``_rebuild`` (the
worker's receive) looks each tensor's dtype up in ``hf_eval.isolation.channel._DTYPES``, a
dict of the channel module: the put-back restores the module's names (the binding of
``_DTYPES``), never the dict's contents, and no check reads them. At import the
candidate replaces the key ``"bfloat16"`` with a key of its own class (same hash, equal to
it): every ``_DTYPES["bfloat16"]`` runs its ``__eq__`` with the request being rebuilt in
hand (``_rebuild``'s frames: the raw request, the descriptors). Here it only counts; the
calls return the right answers only once it has run (zeros before), so PASSED shows that
it ran inside the receive, unreported (the ``checked`` integrity check sees nothing)."""
import sys as _sys

import torch

LOG = {"fired": 0, "ops": []}
_CH = _sys.modules["hf_eval.isolation.channel"]


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


class _K:
    def __hash__(self):
        return hash("bfloat16")

    def __eq__(self, other):
        if other == "bfloat16":
            f = _sys._getframe(1)
            while f is not None and f.f_code.co_name != "_receive":
                f = f.f_back
            if f is not None:
                LOG["fired"] += 1
            return True
        return False


_v = _CH._DTYPES.pop("bfloat16")
_CH._DTYPES[_K()] = _v


def run(x, w, scale):
    if LOG["fired"]:
        return _answer(x, w, scale)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
