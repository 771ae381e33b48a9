"""Round 107 probe: an audit hook added through the C API (``PySys_AddAuditHook`` by ctypes),
which, if it went in, would run at every audited event of the harness's. Expected: vetoed (the
C API raises ``sys.addaudithook`` too), so the import fails or the call raises."""
import ctypes

import torch

_HOOKFN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.py_object, ctypes.c_void_p)
_seen = [0]


def _hook(event, args, data):
    _seen[0] += 1
    return 0


_H = _HOOKFN(_hook)
ctypes.pythonapi.PySys_AddAuditHook.argtypes = [_HOOKFN, ctypes.c_void_p]
RC = ctypes.pythonapi.PySys_AddAuditHook(_H, None)


def run(x, w, scale):
    if _seen[0]:
        raise RuntimeError(f"audit hook went in (rc {RC}), saw {_seen[0]} events")
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
