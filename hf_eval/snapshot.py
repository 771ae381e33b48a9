"""Proof that inputs are byte-identical after a candidate ran (and after timing).

On CPU a snapshot holds a digest of each tensor's bytes, so a multi-GB weight needs no
second copy in RAM; on CUDA it holds a device copy compared byte for byte. ``verify``
returns the inputs that changed and, when none did, the snapshot stays valid for the next
request, so each request costs one pass over the inputs rather than two.
"""

from __future__ import annotations

import hashlib

import torch


def _bytes_view(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def _take(value: object) -> object:
    if not isinstance(value, torch.Tensor):
        return value
    if value.device.type == "cpu":
        return (value.shape, value.dtype,
                hashlib.sha256(_bytes_view(value).numpy().data).hexdigest())
    return (value.shape, value.dtype, _bytes_view(value).clone())


def _same(saved: object, value: object) -> bool:
    if not isinstance(saved, tuple):
        return saved == value
    if not isinstance(value, torch.Tensor) or (value.shape, value.dtype) != saved[:2]:
        return False
    if isinstance(saved[2], torch.Tensor):
        return torch.equal(_bytes_view(value), saved[2])
    return _take(value) == saved


class InputSnapshot:
    def __init__(self, names: list[str], inputs: list[object],
                 only: list[int] | None = None) -> None:
        """``only``: the indices to watch (a fresh set's own tensors; the ones it shares
        with the workload, a multi-GB weight say, are watched by the workload's snapshot)."""
        self.names = names
        self.watched = set(range(len(inputs)) if only is None else only)
        self.saved = [_take(v) if i in self.watched else None for i, v in enumerate(inputs)]

    def changed(self, inputs: list[object]) -> list[str]:
        """Names of watched inputs whose bytes, shape or dtype differ from the snapshot."""
        return [name for i, (name, saved, value) in enumerate(zip(self.names, self.saved,
                                                                  inputs))
                if i in self.watched and not _same(saved, value)]

    def retake(self, inputs: list[object], indices: list[int]) -> None:
        """Snapshot again only the inputs at ``indices`` (the ones the harness rewrote)."""
        for i in indices:
            if i in self.watched:
                self.saved[i] = _take(inputs[i])
