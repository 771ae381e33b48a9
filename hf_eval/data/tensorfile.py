"""One tensor per safetensors file, written and read without a second copy in memory.

``safetensors.torch.save_file`` serialises through a Python ``bytes`` object and
``load_file`` allocates private memory, so a 4.5 GB weight costs 9 GB at peak and cannot
be handed to a worker process without another copy. These two functions produce exactly
the bytes ``save_file`` produces for a single tensor (so content hashes agree; a test
checks it) and read straight into ordinary or shared memory.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
from pathlib import Path

import torch

from hf_eval.data import memory

#: safetensors dtype names.
ST_DTYPES: dict[torch.dtype, str] = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.float8_e4m3fn: "F8_E4M3", torch.float8_e5m2: "F8_E5M2", torch.int64: "I64",
    torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
    torch.bool: "BOOL",
}
TORCH_FROM_ST = {v: k for k, v in ST_DTYPES.items()}
_CHUNK = 16 << 20


class TensorFileError(ValueError):
    """The file is not a single-tensor safetensors file this module can read."""


def _bytes_of(tensor: torch.Tensor) -> memoryview:
    flat = tensor.detach().contiguous().cpu().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy())


def _header(key: str, tensor: torch.Tensor) -> bytes:
    """The length prefix and padded JSON header ``save_file`` writes for one tensor."""
    if tensor.dtype not in ST_DTYPES:
        raise TensorFileError(f"dtype {tensor.dtype} has no safetensors name")
    nbytes = tensor.numel() * tensor.element_size()
    header = json.dumps({key: {"dtype": ST_DTYPES[tensor.dtype], "shape": list(tensor.shape),
                               "data_offsets": [0, nbytes]}}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header


def write(path: str | Path, key: str, tensor: torch.Tensor) -> None:
    """Write ``{key: tensor}`` exactly as ``safetensors.torch.save_file`` would."""
    header = _header(key, tensor)
    with open(path, "wb") as fh:
        fh.write(header)
        if tensor.numel():
            fh.write(_bytes_of(tensor))


def sha256(key: str, tensor: torch.Tensor) -> str:
    """The sha256 of the file ``write`` would produce, computed without writing it.

    Lets a reader that must not write (the checker) verify a regenerated tensor against
    its content-addressed name; the bytes are hashed in place, never copied.
    """
    digest = hashlib.sha256(_header(key, tensor))
    if tensor.numel():
        data = _bytes_of(tensor)
        for start in range(0, len(data), _CHUNK):
            digest.update(data[start:start + _CHUNK])
    return digest.hexdigest()


def read(path: str | Path, key: str, shared: bool = False,
         mapped: bool = False) -> torch.Tensor:
    """Read tensor ``key`` into CPU memory (with ``shared``, into a sealed memfd that workers
    can map but not write: :mod:`hf_eval.data.memory`).

    ``mapped`` maps the file copy-on-write instead of reading it: pages are read on first
    touch and stay reclaimable, so a reader that looks only at the shape (or a slice) of a
    multi-GB tensor never holds it in resident memory. Writes to the tensor stay private.
    """
    with open(path, "rb") as fh:
        prefix = fh.read(8)
        if len(prefix) != 8:
            raise TensorFileError("file too short for a safetensors header")
        (length,) = struct.unpack("<Q", prefix)
        if length > 100_000_000:
            raise TensorFileError("implausible safetensors header length")
        try:
            header = json.loads(fh.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TensorFileError(f"malformed safetensors header ({exc})") from None
        if key not in header:
            raise KeyError(key)
        entry = header[key]
        dtype = TORCH_FROM_ST.get(entry.get("dtype"))
        if dtype is None:
            raise TensorFileError(f"unsupported dtype {entry.get('dtype')!r}")
        start, end = entry["data_offsets"]
        shape = entry["shape"]
        element = torch.empty(0, dtype=dtype).element_size()
        numel = 1
        for size in shape:
            numel *= size
        if end - start != numel * element:
            raise TensorFileError(f"data_offsets {start}..{end} do not fit shape {shape}")
        if mapped:
            offset = 8 + length + start
            if os.fstat(fh.fileno()).st_size < offset + (end - start):
                raise TensorFileError("file is shorter than its header says")
            if end == start:
                return torch.empty(shape, dtype=dtype)
            view = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
            raw = torch.frombuffer(view, dtype=torch.uint8, count=end - start, offset=offset)
            return raw.view(dtype).reshape(shape)
        if shared:  # a sealed memfd: what the audit lends workers, read-only to them
            raw = memory.allocate(end - start)
        else:
            raw = torch.empty(end - start, dtype=torch.uint8)
        fh.seek(8 + length + start)
        if end > start and fh.readinto(raw.numpy()) != end - start:
            raise TensorFileError("file is shorter than its header says")
    return raw.view(dtype).reshape(shape)


def keys(path: str | Path) -> list[str]:
    with open(path, "rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        return [k for k in json.loads(fh.read(length)) if k != "__metadata__"]
