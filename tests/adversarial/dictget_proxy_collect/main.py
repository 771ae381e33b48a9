"""Pure Python, no ctypes, no thread, no signal. ``dict.get`` replaced in ``dict``'s own
namespace (its real dict, reached with ``gc.get_referents(dict.__dict__)``) by a function
of the candidate's, and the interpreter's type cache emptied (``sys._clear_type_cache``).
``collect`` reads ``_tensor_names.get(name)`` on ``vars(torch.Tensor)``, a mappingproxy
whose ``get`` looks ``get`` up on the underlying dict's type by name, after every check
and right before the copies: the hook fills the zeros the calls returned with the answers
there. WRONG unless the hook ran."""
import gc
import sys as _sys

import torch

_D = gc.get_referents(dict.__dict__)[0]
_ORIG = _D["get"]
LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def _get(self, *args):
    try:
        f = _sys._getframe(1)
        if f.f_code.co_name == "collect":
            worker = f.f_locals["self"]
            for set_id, outs in worker.produced:
                y, c = _answer(*worker.sets[set_id])
                outs[0].copy_(y)
                outs[1].copy_(c)
            LOG["fired"] += 1
    except BaseException as exc:  # noqa: BLE001
        LOG["err"] = repr(exc)
    return _ORIG(self, *args)


def run(x, w, scale):
    if _D.get("get") is not _get:
        _D["get"] = _get
        _sys._clear_type_cache()
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
