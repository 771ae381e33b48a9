"""Proof that inputs are byte-identical after a candidate ran (and after timing).

On CPU a snapshot is a digest of each tensor's bytes, so a multi-GB weight does not
need a second copy in RAM; on CUDA it is a device copy compared byte for byte.
"""

from __future__ import annotations

import hashlib

import torch


def _bytes_view(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


class InputSnapshot:
    def __init__(self, names: list[str], inputs: list[object]) -> None:
        self.names = names
        self.saved = [self._take(v) for v in inputs]

    @staticmethod
    def _take(value: object) -> object:
        if not isinstance(value, torch.Tensor):
            return value
        if value.device.type == "cpu":
            return (value.shape, value.dtype,
                    hashlib.sha256(_bytes_view(value).numpy().data).hexdigest())
        return _bytes_view(value).clone()

    def changed(self, inputs: list[object]) -> list[str]:
        """Names of inputs whose bytes, shape or dtype differ from the snapshot."""
        changed = []
        for name, saved, value in zip(self.names, self.saved, inputs):
            if isinstance(saved, torch.Tensor):
                same = (isinstance(value, torch.Tensor) and value.numel() * value.element_size()
                        == saved.numel() and torch.equal(_bytes_view(value), saved))
            elif isinstance(saved, tuple):
                same = isinstance(value, torch.Tensor) and saved == self._take(value)
            else:
                same = saved == value
            if not same:
                changed.append(name)
        return changed
