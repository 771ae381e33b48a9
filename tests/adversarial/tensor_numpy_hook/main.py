"""torch.Tensor.numpy, which the CPU reveal calls on the arena, replaced in run() by a
wrapper: candidate code would run inside every later reveal, in the clocked request."""
import torch
from lent_kit import answer

_real = torch.Tensor.numpy


def _numpy(self, *args, **kwargs):
    return _real(self, *args, **kwargs)


def run(x, w, scale):
    torch.Tensor.numpy = _numpy
    return answer(x, w, scale)
