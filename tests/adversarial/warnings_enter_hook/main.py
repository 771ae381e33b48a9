"""candidate: ``warnings.catch_warnings`` (a class of a module no snapshot holds) gets an
``__enter__`` of the candidate's. ``memory._frombuffer`` enters it for every tensor a
request carries (register, slots), so candidate code runs inside ``Channel.recv`` ->
``_rebuild`` with the unpickled request in reach (frames up), before the worker's
handler reads it. The hook here rewrites nothing (it proves the entry point): the calls
return a wrong answer unless it ran while a request was being rebuilt."""
import sys
import warnings

import torch

SEEN = {"in_rebuild": 0}
_orig_enter = warnings.catch_warnings.__enter__


def __enter__(self):
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_rebuild" and "fds" in f.f_locals:
            SEEN["in_rebuild"] += 1
            break
        f = f.f_back
    return _orig_enter(self)


warnings.catch_warnings.__enter__ = __enter__


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    if not SEEN["in_rebuild"]:
        y = -y
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
