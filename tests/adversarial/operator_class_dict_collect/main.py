"""No thread, no ctypes, no signal, no profile, no name rebound, no table replaced.
``_kernels_replaced`` reads an operator's namespace as ``object.__getattribute__(overload,
"__dict__")``: that still resolves ``__dict__`` on the overload's CLASS first, and a data
descriptor there wins. The candidate gives ``torch.ops.aten.copy_.default`` (an operator
the harness checks right before its copies) a subclass of ``OpOverload`` whose
``__dict__`` is a property returning the real namespace (same table, same pairs: nothing
to see). ``collect`` runs the kernel check after the state check and before the copies:
the property computes every call's answer into the outputs the calls returned (zeros).
WRONG unless the property ran inside ``collect``."""
import sys as _sys

import torch

LOG = {"fired": 0, "err": None}


def _answer(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


_OV = torch.ops.aten.copy_.default
_REAL = next(vars(c)["__dict__"] for c in type(_OV).__mro__ if "__dict__" in vars(c))


class _Overload(type(_OV)):
    @property
    def __dict__(self):
        try:
            f = _sys._getframe(1)
            names = [f.f_code.co_name, f.f_back.f_code.co_name, f.f_back.f_back.f_code.co_name]
            if names == ["_python_kernels", "_kernels_replaced", "collect"]:
                worker = f.f_back.f_back.f_locals.get("self")
                for set_id, outs in list(worker.produced):
                    y, c = _answer(*worker.sets[set_id])
                    outs[0].copy_(y)
                    outs[1].copy_(c)
                    LOG["fired"] += 1
        except BaseException as exc:  # noqa: BLE001
            LOG["err"] = repr(exc)
        return _REAL.__get__(self)


_OV.__class__ = _Overload


def run(x, w, scale):
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))
