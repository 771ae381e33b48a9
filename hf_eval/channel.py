"""The private channel between the audit and a candidate's worker process.

One Unix socket pair per worker. A message is a pickle of plain data in which every CPU
tensor travels as a shared-memory file descriptor (SCM_RIGHTS), so a multi-GB input is
mapped by the worker, not copied, and the parent keeps its own mapping to byte-check it
afterwards. Nothing else is shared: CUDA tensors never cross (the worker uploads its
inputs itself), so the worker needs no CUDA IPC and no access to the parent's memory.

The worker unpickles only what the parent sends; the parent unpickles the worker's replies
with a restricted unpickler that rebuilds tensors and plain containers and refuses any
other class, so a forged reply cannot run code in the audit's process.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import socket
import struct
from dataclasses import dataclass

import torch

#: Upper bound on one message's pickle (descriptors travel beside it, not inside).
MAX_MESSAGE = 256 << 20
MAX_FDS = 1 << 16
FDS_PER_MESSAGE = 250
_HEADER = struct.Struct("<QI")  # pickle length, descriptor count


@dataclass(frozen=True)
class _TensorRef:
    """A CPU tensor as (descriptor index, storage size, view geometry)."""

    fd_index: int
    nbytes: int
    dtype: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int


def shared(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` in shared memory (itself when it already is, else a shared copy)."""
    if tensor.device.type != "cpu":
        raise ValueError("only CPU tensors travel on the channel")
    if tensor.is_shared():
        return tensor
    copy = torch.empty_like(tensor, memory_format=torch.contiguous_format).share_memory_()
    copy.copy_(tensor)
    return copy


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fds: list[int] = []
        self.keep: list[torch.Tensor] = []
        self._index: dict[int, int] = {}  # storage address -> descriptor index

    def reducer_override(self, obj):  # noqa: D401 - pickle hook
        if type(obj) is not torch.Tensor:
            return NotImplemented
        tensor = shared(obj.detach())
        self.keep.append(tensor)
        storage = tensor.untyped_storage()
        fd, size = storage._share_fd_cpu_()
        if storage.data_ptr() not in self._index:  # a storage shared by tensors goes once
            self._index[storage.data_ptr()] = len(self.fds)
            self.fds.append(fd)
        ref = _TensorRef(self._index[storage.data_ptr()], size,
                         str(tensor.dtype).removeprefix("torch."),
                         tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset())
        return _TensorRef, tuple(ref.__dict__.values())


class _Unpickler(pickle.Unpickler):
    """Rebuilds tensors; ``restricted`` refuses every class but the few replies use."""

    ALLOWED = {("builtins", name) for name in
               ("dict", "list", "tuple", "set", "frozenset", "str", "bytes", "int", "float",
                "bool", "complex", "NoneType")}

    def __init__(self, file: io.BytesIO, restricted: bool) -> None:
        super().__init__(file)
        self.restricted = restricted

    def find_class(self, module: str, name: str):
        if (module, name) == (__name__, "_TensorRef"):
            return _TensorRef
        if self.restricted and (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refused class {module}.{name} in a worker reply")
        return super().find_class(module, name)


def _rebuild(obj: object, fds: list[int], storages: dict[int, torch.UntypedStorage]) -> object:
    """Tensors back from references; one mapping per descriptor, so views stay views."""
    if isinstance(obj, _TensorRef):
        if obj.fd_index not in storages:
            storages[obj.fd_index] = torch.UntypedStorage._new_shared_fd_cpu(
                fds[obj.fd_index], obj.nbytes)
        dtype = getattr(torch, obj.dtype)
        return torch.empty(0, dtype=dtype).set_(storages[obj.fd_index], obj.offset,
                                                obj.shape, obj.stride)
    if isinstance(obj, dict):
        return {k: _rebuild(v, fds, storages) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rebuild(v, fds, storages) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_rebuild(v, fds, storages) for v in obj)
    return obj


class ChannelClosed(Exception):
    """The other end closed the socket (or sent something that is not a message)."""


class Channel:
    """Length-prefixed pickles with descriptors, over one end of a socket pair."""

    def __init__(self, sock: socket.socket, restricted: bool) -> None:
        self.sock = sock
        self.restricted = restricted

    def send(self, obj: object) -> None:
        buffer = io.BytesIO()
        pickler = _Pickler(buffer)
        pickler.dump(obj)
        data = buffer.getvalue()
        header = _HEADER.pack(len(data), len(pickler.fds))
        # The kernel takes at most SCM_MAX_FD (253) descriptors per message: send them in
        # batches, the header with the first, one marker byte with each further batch.
        batches = [pickler.fds[i:i + FDS_PER_MESSAGE]
                   for i in range(0, len(pickler.fds), FDS_PER_MESSAGE)] or [[]]
        socket.send_fds(self.sock, [header], batches[0])
        for batch in batches[1:]:
            socket.send_fds(self.sock, [b"+"], batch)
        self.sock.sendall(data)

    def poll(self, timeout: float | None) -> bool:
        readable, _, _ = select.select([self.sock], [], [], timeout)
        return bool(readable)

    def recv(self) -> object:
        header, fds, _, _ = socket.recv_fds(self.sock, _HEADER.size, FDS_PER_MESSAGE)
        if len(header) != _HEADER.size:
            raise ChannelClosed("the channel closed")
        length, count = _HEADER.unpack(header)
        try:
            while len(fds) < count <= MAX_FDS:
                marker, more, _, _ = socket.recv_fds(self.sock, 1, FDS_PER_MESSAGE)
                if marker != b"+" or not more:
                    raise ChannelClosed("malformed descriptor batch")
                fds += more
            if length > MAX_MESSAGE or count != len(fds):
                raise ChannelClosed(f"malformed message header ({length} bytes, "
                                    f"{count} descriptors announced, {len(fds)} sent)")
            data = bytearray()
            while len(data) < length:
                chunk = self.sock.recv(min(length - len(data), 1 << 20))
                if not chunk:
                    raise ChannelClosed("the channel closed mid-message")
                data += chunk
            try:
                obj = _Unpickler(io.BytesIO(bytes(data)), self.restricted).load()
            except (pickle.UnpicklingError, EOFError, AttributeError, ImportError,
                    TypeError, ValueError) as exc:
                raise ChannelClosed(f"unreadable message ({exc})") from None
            return _rebuild(obj, fds, {})
        finally:
            for fd in fds:
                os.close(fd)

    def close(self) -> None:
        self.sock.close()
