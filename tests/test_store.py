"""Tensor store: content addressing, deduplication, verification, resolvers."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import torch

from hf_eval.data import store as store_module
from hf_eval.data.errors import DataError
from hf_eval.data.store import Expected, TensorStore, VerifiedFiles, parse_lfs_pointer


@pytest.fixture
def store(tmp_path: Path) -> TensorStore:
    return TensorStore(tmp_path / "root", verified=VerifiedFiles(tmp_path / "verified.json"))


def test_write_names_file_by_sha256_and_round_trips(store):
    t = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    desc = store.write(t, "blob/workloads/x", "A")
    path = store.root / desc.path
    assert path.name == hashlib.sha256(path.read_bytes()).hexdigest() + ".safetensors"
    assert desc.tensor_key == "A"
    loaded = store.load(desc)
    assert loaded.dtype == torch.int32 and torch.equal(loaded, t)


def test_identical_tensors_share_one_file(store):
    a = store.write(torch.ones(4, dtype=torch.bfloat16), "blob/workloads/x", "W")
    b = store.write(torch.ones(4, dtype=torch.bfloat16), "blob/workloads/x", "W")
    c = store.write(torch.zeros(4, dtype=torch.bfloat16), "blob/workloads/x", "W")
    assert a.path == b.path != c.path
    assert len(list((store.root / "blob/workloads/x").iterdir())) == 2


def test_hash_mismatch_is_refused(store):
    desc = store.write(torch.ones(4), "blob/w", "A")
    path = store.root / desc.path
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="sha256 mismatch"):
        store.load(desc)


def test_missing_file_names_the_path(store):
    desc = store.write(torch.ones(4), "blob/w", "A")
    (store.root / desc.path).unlink()
    with pytest.raises(DataError, match=r"blob/w/.*missing"):
        store.load(desc)


def test_missing_key_names_the_field(store):
    desc = store.write(torch.ones(4), "blob/w", "A")
    with pytest.raises(DataError, match="tensor_key"):
        store.load(desc.model_copy(update={"tensor_key": "B"}))


def test_second_load_does_not_rehash(store, monkeypatch):
    desc = store.write(torch.ones(1000), "blob/w", "A")
    calls = []
    real = store_module.sha256_file
    monkeypatch.setattr(store_module, "sha256_file", lambda p: calls.append(p) or real(p))
    store.load(desc)
    store.load(desc)
    assert len(calls) == 1
    # A fresh process (a new VerifiedFiles reading the same record) trusts it too.
    again = TensorStore(store.root, verified=VerifiedFiles(store.verified.path))
    again.load(desc)
    assert len(calls) == 1
    # Touching the file forces a new verification.
    path = store.root / desc.path
    path.write_bytes(path.read_bytes())
    store.load(desc)
    assert len(calls) == 2


class FakeResolver:
    """Puts back bytes it was given, like a remote would."""

    name = "fake"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.asked: list[tuple[str, Expected | None]] = []

    def fetch(self, store, relpath, expected):
        self.asked.append((relpath, expected))
        if relpath not in self.files:
            return False
        (store.root / relpath).write_bytes(self.files[relpath])
        return True


def test_lfs_pointer_is_resolved_and_verified(store):
    desc = store.write(torch.arange(5.0), "blob/w", "A")
    path = store.root / desc.path
    content = path.read_bytes()
    oid = hashlib.sha256(content).hexdigest()
    pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\n"
               f"size {len(content)}\n")
    path.write_text(pointer)
    assert parse_lfs_pointer(pointer.encode()) == Expected(oid, len(content))
    resolver = FakeResolver({desc.path: content})
    store.resolvers.append(resolver)
    assert torch.equal(store.load(desc), torch.arange(5.0))
    assert resolver.asked == [(desc.path, Expected(oid, len(content)))]


def test_resolver_returning_wrong_bytes_is_refused(store):
    desc = store.write(torch.arange(5.0), "blob/w", "A")
    (store.root / desc.path).unlink()
    other = store.write(torch.arange(6.0), "blob/v", "A")
    store.resolvers.append(FakeResolver({desc.path: (store.root / other.path).read_bytes()}))
    with pytest.raises(DataError, match="sha256 mismatch"):
        store.load(desc)


def test_pointer_without_resolver_is_a_clear_error(store):
    desc = store.write(torch.arange(5.0), "blob/w", "A")
    path = store.root / desc.path
    path.write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{path.stem}\n"
                    "size 10\n")
    with pytest.raises(DataError, match="Git LFS pointer with no content"):
        store.load(desc)


def test_loads_to_requested_device(store):
    desc = store.write(torch.ones(3), "blob/w", "A")
    assert store.load(desc, "cpu").device.type == "cpu"
    if torch.cuda.is_available():
        assert store.load(desc, "cuda").device.type == "cuda"


def test_verified_record_survives_concurrent_threads(tmp_path):
    """Audit lanes are threads of one process sharing the record: concurrent first
    verifications must neither collide on the temporary file nor lose the JSON."""
    from concurrent.futures import ThreadPoolExecutor

    files = []
    for i in range(64):
        path = tmp_path / f"f{i}.bin"
        path.write_bytes(bytes([i]) * 1000)
        files.append(path)
    shared = VerifiedFiles(tmp_path / "verified.json")
    with ThreadPoolExecutor(max_workers=8) as pool:
        digests = list(pool.map(shared.sha256, files))
    assert digests == [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]
    assert len(VerifiedFiles(tmp_path / "verified.json").entries) == len(files)


def test_a_changed_byte_is_rehashed_even_with_size_and_mtime_restored(store):
    desc = store.write(torch.arange(1000, dtype=torch.float32), "blob/w", "A")
    store.load(desc)  # verified and remembered
    path = store.root / desc.path
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    with pytest.raises(DataError, match="sha256 mismatch"):
        store.load(desc)


def test_rehash_trusts_no_remembered_hash(store, monkeypatch):
    desc = store.write(torch.ones(1000), "blob/w", "A")
    path = store.root / desc.path
    store.load(desc)
    # A record that lies (copied from elsewhere, say): this file's identity, another hash.
    verified = json.loads(store.verified.path.read_text())
    key = str(path.resolve())
    verified[key][-1] = "0" * 64
    store.verified.path.write_text(json.dumps(verified))
    trusting = TensorStore(store.root, verified=VerifiedFiles(store.verified.path))
    with pytest.raises(DataError, match="file hashes to 0{64}"):
        trusting.load(desc)
    calls = []
    real = store_module.sha256_file
    monkeypatch.setattr(store_module, "sha256_file", lambda p: calls.append(p) or real(p))
    rehashing = TensorStore(store.root,
                            verified=VerifiedFiles(store.verified.path, rehash=True))
    rehashing.load(desc)
    rehashing.load(desc)
    assert calls == [path]  # hashed again, once in the run
