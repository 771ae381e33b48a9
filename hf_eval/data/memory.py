"""Memory the audit lends a worker: sealed memfds, never the audit's own tensors.

Every CPU tensor that crosses to a worker lives in a memfd the audit created, mapped
shared in the audit and sealed before the worker ever holds it:

* ``F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`` on every buffer: nobody can change its
  size, so no ``ftruncate`` by the worker can turn an audit read into SIGBUS, and no seal
  can be removed or added later.
* ``F_SEAL_FUTURE_WRITE`` on the buffers the worker must only read (inputs, masked
  arenas, staged outputs): from then on no new writable shared mapping, no ``write`` and
  no hole punching is possible, and a read-only mapping cannot be made writable with
  ``mprotect``. The audit's own mapping, made before the seal, stays writable: the audit
  can still rewrite the content in place (the second input set, a new arena), the
  worker cannot.
* Output slots are the one kind the worker writes; the audit only reads them (size-sealed,
  so always readable) and judges a private copy.

The worker maps what it receives with :func:`map_received`: read-only buffers with
``PROT_READ`` (a write to an input faults), slots read-write. Nothing travels the other
way: a worker's reply carries no descriptor at all (:mod:`hf_eval.isolation.channel`).

The audit never lends a tensor it computes with: references, byte checks and fresh
input sets use the audit's private copies; :func:`export` makes a sealed copy to lend.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import warnings
import weakref

import torch

#: Linux 5.1+: no new writable mapping, no write(2), no hole punch; existing mappings stay.
F_SEAL_FUTURE_WRITE = 0x0010
_SIZE_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
_READ_ONLY_SEALS = _SIZE_SEALS | F_SEAL_FUTURE_WRITE


class SharedMap(mmap.mmap):
    """An audit-side mapping of one sealed memfd; tensors made from it keep it alive,
    and the descriptor closes with the last of them."""

    fd: int
    """The memfd's descriptor in the audit; it is closed when this mapping is collected."""
    nbytes: int
    """The memfd's size in bytes: the requested size, but never less than 8."""
    worker_writable: bool
    """Whether the worker maps it writable (an output slot) or read-only (everything else)."""


#: Live buffers by the address of their mapping: how the channel finds a tensor's memfd.
_LIVE: weakref.WeakValueDictionary[int, SharedMap] = weakref.WeakValueDictionary()


#: What the worker maps a received buffer with, bound at import (before any candidate
#: code in a worker): looked up at each request, a name a candidate replaced would run
#: its code on the request's way in.
_mmap, _MAP_SHARED, _PROT_READ, _PROT_WRITE = mmap.mmap, mmap.MAP_SHARED, mmap.PROT_READ, \
    mmap.PROT_WRITE
_close, _torch_frombuffer = os.close, torch.frombuffer


def _spend_the_read_only_warning() -> None:
    """torch warns once per process that a read-only buffer makes a tensor it cannot
    write (the MMU enforces it: that is the point). The warning is spent here, at import
    (in a worker, before any candidate code), so no mapping of a request goes through
    the warnings machinery, whose filters a candidate can extend with entries whose
    comparison is its own code."""
    fd = os.memfd_create("hf-eval-probe", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, 8)
        probe = mmap.mmap(fd, 8, mmap.MAP_SHARED, mmap.PROT_READ)
    finally:
        os.close(fd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.frombuffer(probe, dtype=torch.uint8)


_spend_the_read_only_warning()


def _frombuffer(buffer: mmap.mmap) -> torch.Tensor:
    return _torch_frombuffer(buffer, dtype=torch.uint8)


def allocate(nbytes: int, worker_writable: bool = False) -> torch.Tensor:
    """A zeroed uint8 tensor of ``nbytes`` in a new sealed memfd (audit side)."""
    size = max(int(nbytes), 8)
    fd = os.memfd_create("hf-eval", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        buffer = SharedMap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SIZE_SEALS if worker_writable else _READ_ONLY_SEALS)
    except BaseException:
        os.close(fd)
        raise
    buffer.fd, buffer.nbytes, buffer.worker_writable = fd, size, worker_writable
    weakref.finalize(buffer, os.close, fd)
    tensor = _frombuffer(buffer)
    _LIVE[tensor.data_ptr()] = buffer
    return tensor[:nbytes] if nbytes else tensor[:0]


def empty(shape: torch.Size | tuple[int, ...], dtype: torch.dtype,
          worker_writable: bool = False) -> torch.Tensor:
    """A contiguous tensor of ``shape`` and ``dtype`` in a sealed memfd."""
    numel = 1
    for n in shape:
        numel *= int(n)
    raw = allocate(numel * torch.empty(0, dtype=dtype).element_size(), worker_writable)
    return raw.view(dtype).view(shape)


def export(tensor: torch.Tensor) -> torch.Tensor:
    """A sealed copy of ``tensor`` that the worker can only read (the audit can rewrite it)."""
    copy = empty(tensor.shape, tensor.dtype)
    copy.copy_(tensor)
    return copy


def lendable(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` itself when it already lives in a buffer the worker can only read, else
    a sealed copy (:func:`export`)."""
    buffer = buffer_of(tensor)
    return tensor if buffer is not None and not buffer.worker_writable else export(tensor)


def buffer_of(tensor: torch.Tensor) -> SharedMap | None:
    """The sealed buffer a CPU tensor is a view of, or None when it is not in one."""
    if tensor.device.type != "cpu":
        return None
    return _LIVE.get(tensor.untyped_storage().data_ptr())


def log_file(nbytes: int) -> int:
    """A descriptor for a worker's stdout and stderr: a memfd of ``nbytes`` zeros that
    cannot grow or shrink (writes past its end fail; nothing reaches a disk)."""
    fd = os.memfd_create("hf-eval-log", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, nbytes)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SIZE_SEALS)
    return fd


# --------------------------------------------------------------------------- worker side
def map_received(fd: int, nbytes: int, writable: bool) -> torch.Tensor:
    """(Worker side) a uint8 tensor over a received memfd: read-write for an output slot,
    read-only otherwise (the seals forbid anything else). The descriptor is closed."""
    try:
        prot = _PROT_READ | (_PROT_WRITE if writable else 0)
        buffer = _mmap(fd, nbytes, _MAP_SHARED, prot)
    finally:
        _close(fd)
    return _frombuffer(buffer)


def seals(fd: int) -> int:
    """The seals of a memfd (for tests and checks)."""
    return fcntl.fcntl(fd, fcntl.F_GET_SEALS)
