"""Route of unpickler_load_chain, another method of the same class: the C unpickler
calls ``self.find_class`` for every global a request names (``_TensorRef``, in every
request that carries tensors: ``register``, ``slots``), looked up on ``_Unpickler``. The
call sets ``_Unpickler.find_class``; the hook deletes itself, answers as the harness's
does, and plants the re-arming finalizer in... nothing: it is re-set by the next call
instead. The calls return the right answer only if the hook ran since the call before
that set it (zeros otherwise): candidate code in the receive of the harness's own
requests, unreported."""
import sys as _sys

import torch

LOG = {"fired": 0, "armed": 0}
_CH = _sys.modules["hf_eval.isolation.channel"]
_U = _CH._Unpickler
_FIND = _U.__dict__["find_class"]


def _find(self, module, name):
    type.__delattr__(_U, "find_class")
    LOG["fired"] += 1
    return _FIND(self, module, name)


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def run(x, w, scale):
    first = not LOG["armed"]
    LOG["armed"] = 1
    if "find_class" in vars(_U) and vars(_U)["find_class"] is _find:
        pass  # still set: not fired since
    else:
        type.__setattr__(_U, "find_class", _find)
    if first or LOG["fired"]:
        return _answer(x, w, scale)
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
