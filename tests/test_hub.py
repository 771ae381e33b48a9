"""Hub resolution with ``huggingface_hub`` against a LOCAL HTTP FIXTURE, not the real Hub.

``tests/hub_fixture.py`` serves ``resolve/<revision>/<path>`` the way the Hub does
(302 to a CDN host with ``X-Repo-Commit``, ``X-Linked-Etag``, ``X-Linked-Size``; 404
with the Hub's ``X-Error-Code``); ``HF_ENDPOINT`` points the client at it. The checkout
under test has no tensor files (or only LFS pointers, outside any git clone), so every
tensor comes through ``hf_hub_download`` at the pinned commit, then the harness's own
sha256 check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from hf_eval.data.errors import DataError
from hf_eval.data.hub_resolver import HubPin, HubResolver, load_pin, pin_from_cache_snapshot
from hf_eval.data.store import TensorStore
from hf_eval.dataset import Dataset, open_dataset
from tests.hub_fixture import FakeHub, HubServer

REPO_ID = "tests/inference-kernels"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
DEFINITION = "toy_linear_n8_k16"
# Every hub error starts with the local state of the file, then says what the Hub did.
MISSING = "tensor file is missing; hub"
POINTER = "tensor file is a Git LFS pointer with no content; hub"


def row_paths(dataset: Dataset, index: int) -> set[str]:
    trace = dataset.workloads[DEFINITION][index].value
    return {d.path for d in trace.workload.inputs.values() if getattr(d, "path", None)}


@pytest.fixture
def hub(toy_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fixture Hub serving the toy blobs at COMMIT (also as 'main'); env points at it."""
    fake = FakeHub(REPO_ID)
    fake.add_tree(COMMIT, toy_root)
    with HubServer(fake) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.endpoint)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
        monkeypatch.setenv("HF_EVAL_HUB_REPO", REPO_ID)
        monkeypatch.setenv("HF_EVAL_HUB_REVISION", COMMIT)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield served


def checkout_without_blobs(toy_root: Path, dest: Path) -> Path:
    """A copy of the dataset with its JSON files only (as downloaded without tensors)."""
    shutil.copytree(toy_root, dest, ignore=shutil.ignore_patterns("*.safetensors"))
    return dest


def test_one_row_downloads_exactly_its_tensors_verified(toy_root, tmp_path, hub):
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    dataset = open_dataset(checkout)  # the default chain; the hub is its last resolver
    definition = dataset.definition(DEFINITION)
    inputs = dataset.materialise_inputs(definition, dataset.workloads[DEFINITION][2])

    wanted = row_paths(dataset, 2)
    original = open_dataset(toy_root)
    expected = original.materialise_inputs(definition, original.workloads[DEFINITION][2])
    assert all(torch.equal(a, b) for a, b in zip(inputs[:2], expected[:2]))
    assert sorted(sha for sha, _ in hub.served) == sorted(Path(p).stem for p in wanted)
    assert hub.bytes_served == sum((toy_root / p).stat().st_size for p in wanted)
    present = {p.relative_to(checkout).as_posix() for p in checkout.rglob("*.safetensors")}
    assert present == wanted


def test_lfs_pointer_outside_git_is_resolved_from_the_hub(toy_root, tmp_path, hub):
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = sorted(row_paths(open_dataset(toy_root), 0))[0]
    data = (toy_root / rel).read_bytes()
    (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
    (checkout / rel).write_text("version https://git-lfs.github.com/spec/v1\n"
                                f"oid sha256:{Path(rel).stem}\nsize {len(data)}\n")
    path = open_dataset(checkout).store.materialise(rel)
    assert path.read_bytes() == data


def test_warm_cache_serves_a_second_checkout_offline(toy_root, tmp_path, hub, monkeypatch):
    first = checkout_without_blobs(toy_root, tmp_path / "first")
    rel = sorted(row_paths(open_dataset(toy_root), 1))[0]
    open_dataset(first).store.materialise(rel)
    served = hub.bytes_served
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    second = checkout_without_blobs(toy_root, tmp_path / "second")
    path = open_dataset(second).store.materialise(rel)
    assert path.read_bytes() == (toy_root / rel).read_bytes()
    assert hub.bytes_served == served  # nothing downloaded again


def test_offline_and_not_cached_is_a_clear_error(toy_root, tmp_path, hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = sorted(row_paths(open_dataset(toy_root), 0))[0]
    with pytest.raises(DataError, match=rf"{rel}: {MISSING}: network off \(HF_HUB_OFFLINE=1\)"):
        open_dataset(checkout).store.materialise(rel)
    assert hub.served == []


def test_revision_missing(toy_root, tmp_path, hub, monkeypatch):
    monkeypatch.setenv("HF_EVAL_HUB_REVISION", "f" * 40)
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = sorted(row_paths(open_dataset(toy_root), 0))[0]
    with pytest.raises(DataError, match=rf"{rel}: {MISSING}: revision missing: f{{40}} is not a "
                                        f"revision of {REPO_ID}"):
        open_dataset(checkout).store.materialise(rel)


def test_no_object_at_the_revision(toy_root, tmp_path, hub):
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = "blob/workloads/toy/" + "ab" * 32 + ".safetensors"
    with pytest.raises(DataError, match=rf"{rel}: {MISSING}: no object: {REPO_ID}@{COMMIT}"):
        open_dataset(checkout).store.materialise(rel)


def test_corrupted_download_is_refused_and_evicted(toy_root, tmp_path, hub):
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = sorted(row_paths(open_dataset(toy_root), 0))[0]
    hub.corrupt.add(Path(rel).stem)  # right size, wrong bytes: the Hub client cannot tell
    with pytest.raises(DataError, match=rf"{rel}: {MISSING}: hash mismatch"):
        open_dataset(checkout).store.materialise(rel)
    assert not (checkout / rel).exists()
    assert not list((tmp_path / "hub-cache").rglob(Path(rel).stem))
    hub.corrupt.clear()  # once the server is right again, the same call succeeds
    assert open_dataset(checkout).store.materialise(rel).read_bytes() == (
        toy_root / rel).read_bytes()


def test_pointer_size_mismatch_is_refused(toy_root, tmp_path, hub):
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    rel = sorted(row_paths(open_dataset(toy_root), 0))[0]
    (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
    (checkout / rel).write_text("version https://git-lfs.github.com/spec/v1\n"
                                f"oid sha256:{Path(rel).stem}\nsize 7\n")
    with pytest.raises(DataError, match=rf"{rel}: {POINTER}: size mismatch"):
        TensorStore(checkout, [HubResolver()]).materialise(rel)


def test_no_pinned_revision_is_an_error_not_a_guess(toy_root, tmp_path, hub, monkeypatch):
    monkeypatch.delenv("HF_EVAL_HUB_REVISION")
    assert load_pin().revision is None  # hub.json pins nothing until the data is published
    rel = "blob/workloads/toy/" + "cd" * 32 + ".safetensors"
    with pytest.raises(DataError, match=rf"{rel}: {MISSING}: no revision pinned"):
        TensorStore(tmp_path / "empty", [HubResolver()]).materialise(rel)
    assert hub.served == []


def test_unverifiable_path_is_refused(tmp_path, hub):
    with pytest.raises(DataError, match="no sha256 is known"):
        TensorStore(tmp_path, [HubResolver()]).materialise("blob/workloads/toy/x.safetensors")


def test_a_cache_snapshot_root_pins_its_own_commit(tmp_path):
    root = tmp_path / "datasets--org--name" / "snapshots" / COMMIT
    root.mkdir(parents=True)
    assert pin_from_cache_snapshot(root) == HubPin("org/name", COMMIT, "dataset")
    assert pin_from_cache_snapshot(tmp_path) is None


def _closed_port() -> int:
    """A local port nothing listens on: connecting is refused, like a machine offline."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_without_network_the_fetch_fails_fast_and_says_so(toy_root, tmp_path, monkeypatch):
    """The Hub client alone retries for about 23 s per file; the resolver fails at once."""
    import time

    from hf_eval.data import hub_resolver as hub_module
    monkeypatch.setattr(hub_module, "_unreachable", {})
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setenv("HF_EVAL_HUB_REPO", REPO_ID)
    monkeypatch.setenv("HF_EVAL_HUB_REVISION", COMMIT)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    checkout = checkout_without_blobs(toy_root, tmp_path / "checkout")
    paths = sorted(row_paths(open_dataset(toy_root), 2))
    store = open_dataset(checkout).store
    t0 = time.monotonic()
    with pytest.raises(DataError, match=rf"{paths[0]}: {MISSING}: cannot reach {endpoint} .*"
                                        "no network\\? failing at once"):
        store.materialise(paths[0])
    first = time.monotonic() - t0
    t1 = time.monotonic()
    with pytest.raises(DataError, match=rf"{paths[1]}: {MISSING}: cannot reach {endpoint} "
                                        r"for .* \(it failed \d+ s ago"):
        store.materialise(paths[1])
    assert first < 8 and time.monotonic() - t1 < 1, (first, time.monotonic() - t1)


def test_a_cached_pinned_file_is_served_without_asking_the_hub(toy_root, tmp_path, hub,
                                                                monkeypatch):
    first = checkout_without_blobs(toy_root, tmp_path / "first")
    rel = sorted(row_paths(open_dataset(toy_root), 1))[0]
    open_dataset(first).store.materialise(rel)
    requests = len(hub.served)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")  # the Hub is gone
    second = checkout_without_blobs(toy_root, tmp_path / "second")
    assert open_dataset(second).store.materialise(rel).read_bytes() == (toy_root / rel).read_bytes()
    assert len(hub.served) == requests


def test_downloads_can_use_xet():
    """The Hub stores files in Xet now; huggingface_hub uses hf_xet when it is installed."""
    from importlib.metadata import requires

    from huggingface_hub.utils._runtime import is_xet_available

    assert is_xet_available()
    assert any(r.replace("_", "-").startswith("hf-xet") for r in requires("hf-eval"))
