"""A method the harness did not write by hand (a dataclass's generated one, compiled
from a string, not from a file of the package) given other code in place: the worker's
veto knows every function its namespaces held before candidate code, by identity."""
import sys

import torch

arena = sys.modules["hf_eval.isolation.reveal"].Arena
arena.__repr__.__code__ = (lambda self: "replaced").__code__


def run(x, w, scale):
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)
