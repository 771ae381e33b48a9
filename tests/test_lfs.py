"""Git LFS resolution with the real ``git-lfs`` client against a local ``file://`` remote.

The toy dataset is pushed with its blobs in LFS to a bare repository in a temporary
directory and cloned with ``GIT_LFS_SKIP_SMUDGE=1``, so every tensor file of the clone is
a pointer. Then the default resolver chain of ``open_dataset`` must materialise exactly
the tensors of the row that is read, verified, and refuse corrupted objects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from hf_eval.data.errors import DataError
from hf_eval.data.lfs import GitLfsResolver, git_lfs_available
from hf_eval.data.store import TensorStore, parse_lfs_pointer
from hf_eval.dataset import Dataset, open_dataset
from tests.lfs_fixture import (
    clone_pointers,
    corrupt,
    git,
    isolated_git_env,
    lfs_object,
    local_objects,
    publish_with_lfs,
)


def is_pointer(path: Path) -> bool:
    return parse_lfs_pointer(path.read_bytes()[:1025]) is not None


def tensor_paths(dataset: Dataset, index: int) -> set[str]:
    row = dataset.workloads["toy_linear_n8_k16"][index].value
    return {d.path for d in row.workload.inputs.values() if getattr(d, "path", None)}


@pytest.fixture
def lfs_clone(toy_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(original root, remote repository, pointer-only clone) of the toy dataset."""
    if not git_lfs_available():
        pytest.fail("the git-lfs client is not installed: `bash .ci/setup --test` installs "
                    "the Debian package git-lfs")
    for key, value in isolated_git_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    work = tmp_path / "lfs"
    work.mkdir()
    url = publish_with_lfs(toy_root, work)
    clone = clone_pointers(url, work / "clone")
    return toy_root, work / "remote.git", clone


def test_clone_holds_only_pointers(lfs_clone):
    _, _, clone = lfs_clone
    blobs = list((clone / "blob").rglob("*.safetensors"))
    assert len(blobs) == 4 and all(is_pointer(p) for p in blobs)
    assert local_objects(clone) == {}


def test_reading_one_row_fetches_exactly_its_tensors(lfs_clone):
    original, _, clone = lfs_clone
    dataset = open_dataset(clone)  # the default chain: local, git-lfs, regenerator, hub
    definition = dataset.definition("toy_linear_n8_k16")
    row = dataset.workloads["toy_linear_n8_k16"][1]
    inputs = dataset.materialise_inputs(definition, row)

    wanted = tensor_paths(dataset, 1)
    reference = open_dataset(original)
    expected = reference.materialise_inputs(definition,
                                            reference.workloads["toy_linear_n8_k16"][1])
    assert all(torch.equal(a, b) for a, b in zip(inputs[:2], expected[:2]))
    for path in (clone / "blob").rglob("*.safetensors"):
        rel = path.relative_to(clone).as_posix()
        assert is_pointer(path) == (rel not in wanted), rel
    fetched = local_objects(clone)
    assert set(fetched) == {Path(p).stem for p in wanted}
    assert sum(fetched.values()) == sum((original / p).stat().st_size for p in wanted)


def test_pulled_file_is_verified_by_the_store(lfs_clone):
    _, _, clone = lfs_clone
    dataset = open_dataset(clone)
    rel = sorted(tensor_paths(dataset, 0))[0]
    store = TensorStore(clone, [GitLfsResolver()], verified=dataset.store.verified)
    path = store.materialise(rel)
    assert not is_pointer(path)
    assert dataset.store.verified.sha256(path) == Path(rel).stem


def test_corrupted_remote_object_is_refused(lfs_clone):
    _, remote, clone = lfs_clone
    dataset = open_dataset(clone)
    rel = next(p for p in tensor_paths(dataset, 2) if p not in tensor_paths(dataset, 0))
    corrupt(lfs_object(remote, Path(rel).stem))
    with pytest.raises(DataError, match=rf"{rel}: git-lfs: .*failed.*invalid hash"):
        dataset.materialise_inputs(dataset.definition("toy_linear_n8_k16"),
                                   dataset.workloads["toy_linear_n8_k16"][2])
    assert is_pointer(clone / rel)


def test_corrupted_local_object_is_refused_by_the_store(lfs_clone):
    _, _, clone = lfs_clone
    dataset = open_dataset(clone)
    rel = sorted(tensor_paths(dataset, 0))[0]
    # Fetch the object into the clone's LFS storage only, then damage it there:
    # 'git lfs pull' checks out a local object without re-hashing it.
    git("lfs", "fetch", "--include", rel, cwd=clone)
    corrupt(lfs_object(clone, Path(rel).stem))
    with pytest.raises(DataError, match=rf"{rel}: sha256 mismatch"):
        dataset.store.materialise(rel)


def test_object_missing_on_the_remote_names_the_tensor(lfs_clone):
    _, remote, clone = lfs_clone
    dataset = open_dataset(clone)
    rel = sorted(tensor_paths(dataset, 0) - tensor_paths(dataset, 1))[0]
    lfs_object(remote, Path(rel).stem).unlink()
    with pytest.raises(DataError, match=rf"{rel}: git-lfs: 'git lfs pull' failed"):
        TensorStore(clone, [GitLfsResolver()]).materialise(rel)


def test_declines_outside_a_git_work_tree(lfs_clone, tmp_path):
    _, _, clone = lfs_clone
    outside = tmp_path / "not-a-clone"
    rel = next(p.relative_to(clone).as_posix() for p in (clone / "blob").rglob("*.safetensors"))
    (outside / rel).parent.mkdir(parents=True)
    (outside / rel).write_bytes((clone / rel).read_bytes())
    assert GitLfsResolver().fetch(TensorStore(outside), rel, None) is False
    with pytest.raises(DataError, match="Git LFS pointer with no content"):
        TensorStore(outside, [GitLfsResolver()]).materialise(rel)


def test_declines_missing_files_and_non_pointers(lfs_clone):
    _, _, clone = lfs_clone
    store = TensorStore(clone)
    assert GitLfsResolver().fetch(store, "blob/workloads/toy/" + "0" * 64 + ".safetensors",
                                  None) is False
    assert GitLfsResolver().fetch(store, "README.md" if (clone / "README.md").exists()
                                  else "captures.jsonl", None) is False


def test_pattern_characters_are_refused(lfs_clone):
    _, _, clone = lfs_clone
    source = next((clone / "blob").rglob("*.safetensors"))
    odd = source.parent / "a,b.safetensors"
    odd.write_bytes(source.read_bytes())
    rel = odd.relative_to(clone).as_posix()
    with pytest.raises(DataError, match="pattern character"):
        GitLfsResolver().fetch(TensorStore(clone), rel, None)
