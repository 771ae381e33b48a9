"""The private channel between the audit and one worker: a Unix socket pair.

A message is a length-prefixed pickle. The two directions are not alike:

* **Audit to worker.** Plain data in which every CPU tensor travels as a sealed memfd
  (:mod:`hf_eval.data.memory`, ``SCM_RIGHTS``) and its view geometry, so a
  multi-GB input is mapped by the worker, not copied. CUDA tensors never cross (the
  worker uploads its inputs itself).
* **Worker to audit.** JSON: objects, arrays, strings, numbers, booleans and null, so
  reading a reply runs no code and builds nothing but those (no pickle: its opcodes can
  call constructors). A reply carries no descriptor (the worker lends the audit no
  memory it could truncate or rewrite), is bounded (:data:`MAX_REPLY`), and
  :mod:`hf_eval.isolation.protocol` then checks its shape.

Every receive has one deadline for the whole message, partial frames included: a
worker that sends a header and stalls is a :class:`ChannelTimeout` at that deadline,
and so is a send the worker does not read. No read blocks past it, and urgent
(out-of-band) data on the channel is a malformed message.
"""

from __future__ import annotations

import _json
import _socket
import array
import functools
import io
import json
import os
import pickle
import select
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch

from hf_eval.data import memory

_T = TypeVar("_T")

#: Upper bound on one request's pickle (descriptors travel beside it, not inside).
MAX_MESSAGE = 256 << 20
#: Upper bound on one reply: replies hold numbers and short texts, no tensors (a trial's
#: reply for 65,536 calls of two outputs is under 0.8 MiB). Reading JSON builds objects
#: dozens of times the size of their bytes, so the bound is the audit's memory too.
MAX_REPLY = 1 << 20
MAX_FDS = 1 << 16
FDS_PER_MESSAGE = 250
_HEADER = struct.Struct("<QI")  # pickle length, descriptor count
#: What a reply goes out through, bound at import: looked up on its module at each send,
#: it would run a ``__getattribute__`` of the candidate's (a module's class can be
#: changed) after every check.
#: And what a request comes in through, bound likewise (in a worker, before any candidate
#: code): a candidate that replaced ``io.BytesIO`` or ``select.poll`` on their modules
#: would read, and could rewrite, every request before the worker did.
_poll, _POLLIN, _POLLPRI = select.poll, select.POLLIN, select.POLLPRI
_partial, _BytesIO = functools.partial, io.BytesIO
#: The socket's own methods, from the C type, called on a socket the caller names: the
#: worker's serve loop passes the one it held before any candidate code, so an object put
#: in ``Channel.sock`` later (a proxy that reads every message first) is never used.
_sock_recv, _sock_recvmsg, _sock_sendmsg, _sock_sendall, _sock_settimeout, _sock_fileno = (
    vars(_socket.socket)[name]
    for name in ("recv", "recvmsg", "sendmsg", "sendall", "settimeout", "fileno"))
_SOL_SOCKET, _SCM_RIGHTS, _CMSG_LEN = _socket.SOL_SOCKET, _socket.SCM_RIGHTS, _socket.CMSG_LEN
_array = array.array


def _plain(obj: object) -> object:
    """A reply as JSON can hold it; a tensor (or any other object) in it is a harness bug."""
    if isinstance(obj, torch.Tensor):
        raise TypeError("a worker reply carries no tensor")
    raise TypeError(f"a worker reply carries no {type(obj).__name__}")


#: The reply's encoder: JSON's compiled one, made now (in a worker, before any candidate
#: code), which looks up nothing as it runs (``json.dumps`` looks up ``JSONEncoder`` and
#: its methods, which candidate code could replace for one reply and put back).
_encode = _json.make_encoder(None, _plain, _json.encode_basestring_ascii, None, ": ", ", ",
                             False, False, True)
_join = "".join


def _send_fds(sock: socket.socket, buffers: list[bytes], fds: list[int]) -> None:
    """``socket.send_fds`` through the bound methods."""
    _sock_sendmsg(sock, buffers, [(_SOL_SOCKET, _SCM_RIGHTS, _array("i", fds))] if fds else [])


def _recv_fds(sock: socket.socket, size: int, most: int) -> tuple[bytes, list[int]]:
    """``socket.recv_fds`` through the bound methods: the bytes and the descriptors."""
    fds = _array("i")
    data, ancillary, _, _ = _sock_recvmsg(sock, size, _CMSG_LEN(most * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == _SOL_SOCKET and kind == _SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    return data, list(fds)
_loads, _close, _monotonic = json.loads, os.close, time.monotonic
_empty, _set = torch.empty, torch._C.TensorBase.set_
_untyped_storage = torch.Tensor.untyped_storage
#: The dtypes a request's tensors may have, by name (a fixed table, not a lookup on torch):
#: pairs, not a dict, so there is nothing in it a candidate could plant a key in.
_DTYPES = tuple((name, value) for name, value in vars(torch).items()
                if type(value) is torch.dtype)


def _dtype_named(name: object) -> torch.dtype:
    """The dtype of a request's tensor reference, by its exact name."""
    if type(name) is str:
        for known, dtype in _DTYPES:
            if known == name:
                return dtype
    raise ChannelClosed("malformed message: a tensor of no known dtype")


def readable(source: object, timeout: float | None) -> bool:
    """Whether ``source`` (a descriptor or an object with ``fileno``) is readable within
    ``timeout`` seconds (None: wait). ``poll``, not ``select``: a process holding many
    descriptors gets numbers above ``select``'s limit of 1023."""
    poller = _poll()
    poller.register(source, _POLLIN | _POLLPRI)
    return bool(poller.poll(None if timeout is None else max(0.0, timeout) * 1e3))


@dataclass(frozen=True)
class _TensorRef:
    """A CPU tensor as (descriptor index, buffer size, who may write, view geometry)."""

    fd_index: int
    """The buffer's position among the descriptors sent with the message; tensors that view
    one buffer share one index."""
    nbytes: int
    """The whole buffer's size in bytes (the memfd the worker maps)."""
    writable: bool
    """Whether the worker maps the buffer read-write (an output slot) or read-only."""
    dtype: str
    """The torch dtype's name without ``torch.`` (``float16``)."""
    shape: tuple[int, ...]
    """The tensor's shape."""
    stride: tuple[int, ...]
    """The tensor's strides, in elements."""
    offset: int
    """The tensor's storage offset into the buffer, in elements."""


class ChannelClosed(Exception):
    """The other end closed the socket, or sent something that is not a message."""


class ChannelTimeout(ChannelClosed):
    """The whole message did not arrive (or could not be sent) before its deadline."""


class _Pickler(pickle.Pickler):
    """The audit's pickler: CPU tensors go as sealed memfds (a copy when not in one)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.fds: list[int] = []
        self.keep: list[torch.Tensor] = []
        self._index: dict[int, int] = {}  # buffer descriptor -> index in fds

    def reducer_override(self, obj):  # noqa: D401 - pickle hook
        if type(obj) is not torch.Tensor:
            return NotImplemented
        tensor = obj.detach()
        if tensor.device.type != "cpu":
            raise ValueError("only CPU tensors travel on the channel")
        buffer = memory.buffer_of(tensor)
        if buffer is None:
            tensor = memory.export(tensor)
            buffer = memory.buffer_of(tensor)
        self.keep.append(tensor)
        if buffer.fd not in self._index:
            self._index[buffer.fd] = len(self.fds)
            self.fds.append(buffer.fd)
        ref = _TensorRef(self._index[buffer.fd], buffer.nbytes, buffer.worker_writable,
                         str(tensor.dtype).removeprefix("torch."), tuple(tensor.shape),
                         tuple(tensor.stride()), tensor.storage_offset())
        return _TensorRef, tuple(ref.__dict__.values())


class _Unpickler(pickle.Unpickler):
    """The worker's unpickler of requests: tensors as memfds, and no other class. A
    request holds plain data (dicts, lists, tuples, strings, numbers, booleans, None) and
    tensor references, so nothing in it is of a class whose methods could be anyone's
    code."""

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_TensorRef":
            return _TensorRef
        raise pickle.UnpicklingError(f"a request holds no {module}.{name}")


#: The only values a request holds besides containers and tensor references, by exact
#: type: a value of a subclass (a str whose ``__eq__`` is someone's code) is no request.
_PLAIN = (type(None), bool, int, float, str, bytes)


def _rebuild(obj: object, fds: list[int], storages: dict[int, torch.Tensor]) -> object:
    """(Worker side) tensors back from references; one mapping per buffer. Anything but
    plain data (exact containers, str keys, the plain values above) is refused: whatever
    came to rewrite a request, no field of it runs code where the worker compares it."""
    kind = type(obj)
    if kind is _TensorRef:
        if obj.fd_index not in storages:
            storages[obj.fd_index] = memory.map_received(fds[obj.fd_index], obj.nbytes,
                                                         obj.writable)
            fds[obj.fd_index] = -1  # closed by map_received
        return _set(_empty(0, dtype=_dtype_named(obj.dtype)),
                    _untyped_storage(storages[obj.fd_index]), obj.offset, obj.shape,
                    obj.stride)
    if kind is dict:
        if not all(type(k) is str for k in obj):
            raise ChannelClosed("malformed message: a request's key is not a str")
        return {k: _rebuild(v, fds, storages) for k, v in obj.items()}
    if kind is list:
        return [_rebuild(v, fds, storages) for v in obj]
    if kind is tuple:
        return tuple(_rebuild(v, fds, storages) for v in obj)
    if not any(kind is plain for plain in _PLAIN):
        raise ChannelClosed("malformed message: a request holds a value that is not "
                            "plain data")
    return obj


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - _monotonic()
    if left <= 0:
        raise ChannelTimeout("the message did not complete before its deadline")
    return left


def _send_message(sock: socket.socket, data: bytes, fds: list[int],
                  deadline: float | None) -> None:
    """The header, the descriptors and ``data``, whole before ``deadline``."""
    header = _HEADER.pack(len(data), len(fds))
    # The kernel takes at most SCM_MAX_FD (253) descriptors per message: send them in
    # batches, the header with the first, one marker byte with each further batch.
    batches = [fds[i:i + FDS_PER_MESSAGE] for i in range(0, len(fds), FDS_PER_MESSAGE)]
    try:
        _sock_settimeout(sock, _remaining(deadline))
        _send_fds(sock, [header], batches[0] if batches else [])
        for batch in batches[1:]:
            _send_fds(sock, [b"+"], batch)
        _sock_sendall(sock, data)
    except TimeoutError:
        raise ChannelTimeout("the other end did not read the message in time") from None
    finally:
        _sock_settimeout(sock, None)


def send_reply(sock: socket.socket, obj: object, deadline: float | None = None) -> None:
    """(The worker's end) Send the reply ``obj`` as JSON on ``sock``. A function of the
    module, not a method: it reads no channel's state, which candidate code could reach
    (an attribute set on the channel ran its code here, with the reply in hand)."""
    _send_message(sock, _join(_encode(obj, 0)).encode(), [], deadline)


def receive_request(sock: socket.socket, deadline: float | None = None) -> object:
    """(The worker's end) One request from ``sock``, its tensors mapped; like
    :func:`send_reply`, it reads no channel's state."""
    return _receive(sock, deadline, False)


def _wait(deadline: float | None, sock: socket.socket) -> None:
    """Until ``sock`` is readable, within ``deadline``. Out-of-band data is no message: a
    stream socket's urgent byte wakes ``poll`` and is then skipped by ``recv``, so it
    would leave the reader waiting on nothing."""
    poller = _poll()
    poller.register(_sock_fileno(sock), _POLLIN | _POLLPRI)  # no method of its class
    left = _remaining(deadline)
    events = poller.poll(None if left is None else left * 1e3)
    if not events:
        raise ChannelTimeout("the message did not complete before its deadline")
    if any(mask & _POLLPRI for _, mask in events):
        raise ChannelClosed("malformed message: out-of-band data (MSG_OOB) on the channel")


def _read(deadline: float | None, receive: Callable[[], _T], sock: socket.socket) -> _T:
    """One read, which never waits past ``deadline``: between the wait and the read the
    bytes poll saw may be gone (an urgent byte is skipped), so the read itself is bounded
    too."""
    _wait(deadline, sock)
    try:
        _sock_settimeout(sock, _remaining(deadline))
        return receive()
    except TimeoutError:
        raise ChannelTimeout("the message did not complete before its deadline") from None
    finally:
        _sock_settimeout(sock, None)


def _recv_some(size: int, deadline: float | None, fds: list[int],
               sock: socket.socket) -> bytes:
    """Up to ``size`` bytes (at least one), with any descriptors that come along."""
    data, more = _read(deadline, lambda: _recv_fds(sock, size, FDS_PER_MESSAGE), sock)
    fds += more
    if not data:
        raise ChannelClosed("the channel closed")
    return data


def _receive(sock: socket.socket, deadline: float | None, restricted: bool) -> object:
    """One message from ``sock``: a reply (``restricted``, the audit's end: JSON, no
    descriptor) or a request (the worker's end: a pickle of plain data and tensor
    references, and the descriptors they name)."""
    fds: list[int] = []
    try:
        header = b""
        while len(header) < _HEADER.size:
            header += _recv_some(_HEADER.size - len(header), deadline, fds, sock)
        length, count = _HEADER.unpack(header)
        limit = MAX_REPLY if restricted else MAX_MESSAGE
        if restricted and (count or fds):
            raise ChannelClosed(f"malformed message: a reply carries {max(count, len(fds))}"
                                " descriptor(s); replies carry none")
        if length > limit or count > MAX_FDS:
            raise ChannelClosed(f"malformed message header ({length} bytes, "
                                f"{count} descriptors announced)")
        while len(fds) < count:
            if _recv_some(1, deadline, fds, sock) != b"+":
                raise ChannelClosed("malformed descriptor batch")
        if count != len(fds):
            raise ChannelClosed(f"malformed message header ({count} descriptors "
                                f"announced, {len(fds)} sent)")
        data = bytearray()
        while len(data) < length:
            chunk = _read(deadline, _partial(_sock_recv, sock, min(length - len(data), 1 << 20)),
                          sock)
            if not chunk:
                raise ChannelClosed("the channel closed mid-message")
            data += chunk
        try:
            if restricted:
                return _loads(bytes(data))
            obj = _Unpickler(_BytesIO(bytes(data))).load()
        except Exception as exc:  # noqa: BLE001 - whatever the bytes are, not a message
            raise ChannelClosed(f"unreadable message ({type(exc).__name__}: "
                                f"{str(exc)[:200]})") from None
        return _rebuild(obj, fds, {})
    finally:
        for fd in fds:
            if fd >= 0:
                _close(fd)


class Channel:
    """Length-prefixed pickles over one end of a socket pair.

    ``restricted`` is the audit's end: it sends tensors as sealed memfds and accepts
    plain data without descriptors; the worker's end is the reverse."""

    def __init__(self, sock: socket.socket, restricted: bool) -> None:
        self.sock = sock
        self.restricted = restricted
        #: (The audit's end) Every memfd sent on this channel, by inode: the number of
        #: the case it was first lent for (:attr:`case`) and its size in bytes.
        self.lent: dict[int, tuple[int, int]] = {}
        #: (The audit's end) The case the worker serves now; the audit counts them.
        self.case = 0

    # ------------------------------------------------------------------ sending
    def send(self, obj: object, deadline: float | None = None,
             sock: socket.socket | None = None) -> None:
        """Send ``obj`` whole before ``deadline``, on ``sock`` (default: this channel's)."""
        sock = self.sock if sock is None else sock
        if not self.restricted:  # the worker's end
            send_reply(sock, obj, deadline)
            return
        buffer = io.BytesIO()
        pickler = _Pickler(buffer)
        pickler.dump(obj)
        fds, data = pickler.fds, buffer.getvalue()
        for fd in fds:
            info = os.fstat(fd)
            self.lent.setdefault(info.st_ino, (self.case, info.st_size))
        _send_message(sock, data, fds, deadline)

    # ------------------------------------------------------------------ receiving
    def poll(self, timeout: float | None) -> bool:
        return readable(self.sock, timeout)

    def recv(self, deadline: float | None = None, sock: socket.socket | None = None) -> object:
        """One message, whole, before ``deadline`` (``time.monotonic()``; None: no limit),
        from ``sock`` (default: this channel's)."""
        return _receive(self.sock if sock is None else sock, deadline, self.restricted)

    def close(self) -> None:
        self.sock.close()
