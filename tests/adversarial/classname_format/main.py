"""Round 114: an output of a tensor subclass whose class ``__name__`` is a ``str``
*subclass* (``type.__name__``'s setter keeps the object it is given). ``_checked`` refuses
a non-plain output with ``f"output {index} is {_class_name(type(out))}, ..."``: the
f-string formats the name with ``format()``, which runs the subclass's ``__format__`` (the
candidate's code) inside the harness's steps after the calls and the put-back. There the
candidate writes the right answers into the zeros the first output returned... but the
refusal stands. Expected: RUNTIME_ERROR (a WEAKNESS if the code runs: candidate code in
the harness's error path after the calls)."""
import torch
from lent_kit import answer as _answer

RAN = []


class _Name(str):
    def __format__(self, spec):
        RAN.append(1)
        return "Tensor (plain, trust me)"


class _Sub(torch.Tensor):
    pass


_Sub.__name__ = _Name("Tensor")


def run(x, w, scale):
    y, c = _answer(x, w, scale)
    return y.as_subclass(_Sub), c
