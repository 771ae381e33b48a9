"""the serve loop names ``torch.OutOfMemoryError`` at the moment a handler
raises (a lookup on the ``torch`` module, which the integrity check does not hold). Bound
to ``Exception``, every failure of the candidate's is reported as "out of memory: ...",
the text a memory limit gives. Does the audit's verdict or blame change?"""
import torch

torch.OutOfMemoryError = Exception


def run(x, w, scale):
    raise ValueError("a plain bug of the candidate's")
