"""Single-tensor safetensors files: byte-identical to safetensors' own writer, readable
into ordinary or shared memory, and bad files rejected."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file

from hf_eval.data import memory, tensorfile

CASES = [(torch.bfloat16, (3, 5)), (torch.float32, (0, 4)), (torch.float8_e4m3fn, (7,)),
         (torch.int8, ()), (torch.int64, (2, 2)), (torch.bool, (5,)), (torch.int32, (1, 1, 3))]


@pytest.mark.parametrize("dtype, shape", CASES, ids=[f"{d}-{s}" for d, s in CASES])
@pytest.mark.parametrize("shared", [False, True])
def test_same_bytes_as_safetensors_and_round_trip(tmp_path, dtype, shape, shared):
    gen = torch.Generator().manual_seed(1)
    if dtype.is_floating_point:
        t = (torch.randn(shape, generator=gen) * 3).to(dtype)
    else:
        t = torch.randint(0, 2, shape, generator=gen).to(dtype)
    save_file({"A": t}, tmp_path / "theirs.safetensors")
    tensorfile.write(tmp_path / "ours.safetensors", "A", t)
    assert (tmp_path / "ours.safetensors").read_bytes() == \
        (tmp_path / "theirs.safetensors").read_bytes()
    back = tensorfile.read(tmp_path / "theirs.safetensors", "A", shared=shared)
    assert back.dtype == dtype and back.shape == t.shape
    assert torch.equal(back.reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8))
    # shared: in a sealed memfd, which workers can map but not write
    assert (memory.buffer_of(back) is not None) == shared


def test_bad_files_are_rejected(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(b"\x01")
    with pytest.raises(tensorfile.TensorFileError, match="too short"):
        tensorfile.read(path, "A")
    tensorfile.write(path, "A", torch.ones(4))
    with pytest.raises(KeyError):
        tensorfile.read(path, "B")
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(tensorfile.TensorFileError, match="shorter than its header"):
        tensorfile.read(path, "A")
