"""Honest answers, but the worker's clock reading is rewritten (the serving frame's
``t0``, from inside run()) so every trial reports an event time near 1.7e308 ms: finite
or not, the protocol bounds a time, and an older audit wrote the overflowing median into
a record that its own validation then refused, stopping the whole audit."""
import ctypes

import lent_kit
import symbols
import torch

# at its address, read from the interpreter's file: the lookup by name is refused
_locals_to_fast = symbols.python_function("PyFrame_LocalsToFast", None, ctypes.py_object,
                                          ctypes.c_int)


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    frame = lent_kit.trial_frame()
    if frame is not None and "t0" in frame.f_locals:
        frame.f_locals["t0"] = -1.7e305
        _locals_to_fast(frame, 0)
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
