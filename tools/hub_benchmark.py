"""Benchmark of lazy, verified tensor access; writes docs/hub-benchmark.md.

Run from the repository root: ``.venv/bin/python tools/hub_benchmark.py``.

Everything here is LOCAL: the Git LFS remote is a bare repository reached over
``file://`` with the real ``git-lfs`` client, and the Hub is the HTTP fixture of
``tests/hub_fixture.py`` on 127.0.0.1. The numbers measure the harness (bytes fetched,
hashing, per-row overhead), not the network or the real Hub.

Measured:
1. bytes fetched versus bytes referenced when one row's tensors are read (LFS and Hub);
   they must be equal: a row fetches its own tensors, once, and nothing else;
2. verification throughput (sha256 of a large file, GB/s) and the cost of a re-check
   that the verified-file record answers (a ``stat``);
3. time per row for the first (cold) access and for warm-cache access.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from hf_eval.data.store import TensorStore, VerifiedFiles, sha256_file  # noqa: E402
from hf_eval.dataset import Dataset, open_dataset  # noqa: E402
from hf_eval.hub.lazy import with_tensors  # noqa: E402
from tests.conftest import TOY_DEFINITION, write_json, write_toy_rows  # noqa: E402
from tests.hub_fixture import FakeHub, HubServer  # noqa: E402
from tests.lfs_fixture import (  # noqa: E402
    clone_pointers,
    isolated_git_env,
    local_objects,
    publish_with_lfs,
)

NAME = "bench_linear_n1024_k1024"
ROWS_M = (256, 512, 1024, 2048)
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_dataset(root: Path) -> None:
    """One definition (x [M,1024] bf16, a shared w [1024,1024] bf16, a scalar), 4 rows."""
    definition = json.loads(json.dumps(TOY_DEFINITION))
    definition["name"] = NAME
    definition["axes"]["N"]["value"] = 1024
    definition["axes"]["K"]["value"] = 1024
    write_json(root / f"definitions/toy/{NAME}.json", definition)
    store = TensorStore(root)
    gen = torch.Generator().manual_seed(0)
    w = store.write(torch.randn(1024, 1024, generator=gen).bfloat16(), f"blob/workloads/{NAME}",
                    "w")
    xs = [store.write(torch.randn(m, 1024, generator=gen).bfloat16(), f"blob/workloads/{NAME}",
                      "x") for m in ROWS_M]
    write_toy_rows(root, NAME, [f"00000000-0000-0000-0000-00000000100{i}"
                                for i in range(len(ROWS_M))],
                   [{"M": m} for m in ROWS_M],
                   [{"x": x, "w": w, "scale": {"type": "scalar", "value": 0.5}} for x in xs],
                   "tools.hub_benchmark")


def referenced_bytes(root: Path, dataset: Dataset, index: int) -> int:
    trace = dataset.workloads[NAME][index].value
    paths = {d.path for d in trace.workload.inputs.values() if getattr(d, "path", None)}
    return sum((root / p).stat().st_size for p in paths)


def lazy_rows(root: Path, dataset: Dataset):
    """The rows as a ``datasets.Dataset`` (the builder's row format) with lazy tensors."""
    import datasets

    from hf_eval.hub.rows import row_features, split_rows

    rows = [row for _, row in split_rows(dataset, [NAME], "test")]
    table = datasets.Dataset.from_list(rows, features=row_features())
    return with_tensors(table, dataset=dataset)


def time_row(rows, index: int) -> float:
    t0 = time.perf_counter()
    rows[index]["tensors"].args()
    return time.perf_counter() - t0


def warm_per_row(rows, repeats: int = 20) -> float:
    samples = []
    for _ in range(repeats):
        for i in range(len(ROWS_M)):
            samples.append(time_row(rows, i))
    return statistics.median(samples)


def bench_lfs(source: Path, work: Path) -> dict:
    os.environ.update(isolated_git_env(work))
    (work / "lfs").mkdir()
    url = publish_with_lfs(source, work / "lfs")
    clone = clone_pointers(url, work / "lfs" / "clone")
    dataset = open_dataset(clone)
    rows = lazy_rows(clone, dataset)
    index = 2
    cold = time_row(rows, index)
    fetched = sum(local_objects(clone).values())
    result = {"row": index, "referenced": referenced_bytes(source, dataset, index),
              "fetched": fetched, "cold_s": cold}
    for i in range(len(ROWS_M)):
        rows[i]["tensors"].args()
    result["warm_s"] = warm_per_row(rows)
    return result


def bench_hub(source: Path, work: Path) -> dict:
    checkout = work / "hub-checkout"
    shutil.copytree(source, checkout, ignore=shutil.ignore_patterns("*.safetensors"))
    hub = FakeHub("bench/inference-kernels")
    hub.add_tree(COMMIT, source)
    with HubServer(hub) as served:
        os.environ.update(HF_ENDPOINT=served.endpoint, HF_HUB_CACHE=str(work / "hub-cache"),
                          HF_EVAL_HUB_REPO=hub.repo_id, HF_EVAL_HUB_REVISION=COMMIT)
        os.environ.pop("HF_HUB_OFFLINE", None)
        dataset = open_dataset(checkout)
        rows = lazy_rows(checkout, dataset)
        index = 2
        cold = time_row(rows, index)
        result = {"row": index, "referenced": referenced_bytes(source, dataset, index),
                  "fetched": served.bytes_served, "cold_s": cold}
        for i in range(len(ROWS_M)):
            rows[i]["tensors"].args()
        result["fetched_all_rows"] = served.bytes_served
        result["warm_s"] = warm_per_row(rows)
        # A second checkout, offline: every tensor comes from the Hub cache, re-verified.
        os.environ["HF_HUB_OFFLINE"] = "1"
        second = work / "hub-checkout-2"
        shutil.copytree(checkout, second, ignore=shutil.ignore_patterns("*.safetensors"))
        rows2 = lazy_rows(second, open_dataset(second))
        result["offline_cache_cold_s"] = time_row(rows2, index)
        result["served_after_offline"] = served.bytes_served
        os.environ.pop("HF_HUB_OFFLINE")
    return result


def bench_verify(work: Path, size_mb: int) -> dict:
    path = work / "verify.bin"
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as fh:
        for _ in range(size_mb):
            fh.write(chunk)
    sha256_file(path)  # page cache warm: measure hashing, not the disk
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        sha256_file(path)
        times.append(time.perf_counter() - t0)
    verified = VerifiedFiles(work / "verified.json")
    verified.sha256(path)
    t0 = time.perf_counter()
    for _ in range(1000):
        verified.sha256(path)
    recheck = (time.perf_counter() - t0) / 1000
    return {"size_bytes": size_mb << 20, "best_s": min(times),
            "gb_per_s": (size_mb << 20) / min(times) / 1e9, "recheck_s": recheck}


def render(lfs: dict, hub: dict, verify: dict) -> str:
    def mib(n: int) -> str:
        return f"{n / (1 << 20):.3f} MiB ({n:,} bytes)"

    def ms(s: float) -> str:
        return f"{s * 1e3:.2f} ms"

    def bytes_row(label: str, r: dict) -> str:
        return (f"| {label} | {r['row']} | {mib(r['referenced'])} | {mib(r['fetched'])} | "
                f"{r['referenced'] == r['fetched']} |")

    cpu = platform.processor() or platform.machine()
    lfs_row = bytes_row("Git LFS (`git lfs pull --include`, pointer-only clone)", lfs)
    hub_row = bytes_row("Hub (`hf_hub_download` at a pinned commit, fixture)", hub)
    hashing = (f"| sha256 of a {verify['size_bytes'] >> 20} MiB file (page cache warm, best of "
               f"3) | {verify['gb_per_s']:.2f} GB/s ({verify['best_s']:.3f} s) |")
    recheck = ("| re-check of an already verified, unchanged file (`VerifiedFiles`: size + "
               f"mtime) | {verify['recheck_s'] * 1e6:.1f} µs |")
    return f"""# Lazy, verified tensor access: benchmark

**This is a local fixture measurement.** The Git LFS remote is a bare repository on the
same disk, reached over `file://` by the real `git-lfs` client
({_git_lfs_version()}); the "Hub" is the HTTP fixture of `tests/hub_fixture.py` on
127.0.0.1, which answers `resolve/` like the Hub (302 to a CDN host with the LFS sha256
and size) but is not the Hub. The numbers measure what the harness does (which bytes it
fetches, hashing, per-row overhead), not network throughput or the real Hub's latency.
Produced by `.venv/bin/python tools/hub_benchmark.py` on a {os.cpu_count()}-core
{cpu} CPU machine shared with other jobs (expect tens of percent between runs),
Python {platform.python_version()}, torch {torch.__version__}.

Data: one definition, `x [M, 1024]` bf16 per row (M = {", ".join(map(str, ROWS_M))}),
one `w [1024, 1024]` bf16 shared by all rows (stored once), a scalar. Rows are the
builder's rows wrapped by `hf_eval.hub.lazy.with_tensors`; a row is "read" with
`rows[i]["tensors"].args()`.

## Bytes fetched versus bytes referenced (single-row access)

| path | row | bytes referenced by the row | bytes fetched | equal |
|---|---|---|---|---|
{lfs_row}
{hub_row}

LFS "fetched" is the size of the objects in the clone's `.git/lfs/objects` after the
read; Hub "fetched" is the body bytes the fixture served. After reading all four rows
the fixture had served {mib(hub["fetched_all_rows"])}: every file once (the shared `w`
is not fetched again). A second checkout with `HF_HUB_OFFLINE=1` read row
{hub["row"]} from the Hub cache in {ms(hub["offline_cache_cold_s"])} (sha256 re-checked
from the verified-file record) and the fixture served
{hub["served_after_offline"] - hub["fetched_all_rows"]} more bytes.

## Verification throughput

| what | result |
|---|---|
{hashing}
{recheck}

Every file is hashed once when it is materialised (and again only if its size or mtime
changes); at the rate above, the 146 GB of the captured dataset would take about
{146e9 / verify["gb_per_s"] / 1e9 / 60:.0f} minutes of one core if it were all read.

## Time per row

| path | first access (fetch + verify + load) | warm cache (median over 80 reads) |
|---|---|---|
| Git LFS | {ms(lfs["cold_s"])} | {ms(lfs["warm_s"])} |
| Hub fixture | {ms(hub["cold_s"])} | {ms(hub["warm_s"])} |

Warm access is a `stat` per file (the verified-file record) plus reading the tensor with
`safetensors`; first access includes starting `git lfs` or the HTTP round trips, so it
depends on the transport far more than on the harness.
"""


def _git_lfs_version() -> str:
    import subprocess

    out = subprocess.run(["git", "lfs", "version"], capture_output=True, text=True, check=False)
    return out.stdout.strip().split(" (")[0] or "git-lfs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "hub-benchmark.md")
    parser.add_argument("--verify-mb", type=int, default=512)
    args = parser.parse_args()
    import datasets

    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["HF_EVAL_CACHE"] = str(work / "eval-cache")
        source = work / "source"
        make_dataset(source)
        lfs = bench_lfs(source, work)
        hub = bench_hub(source, work)
        verify = bench_verify(work, args.verify_mb)
    for name, result in (("lfs", lfs), ("hub", hub)):
        if result["fetched"] != result["referenced"]:
            print(f"{name}: fetched {result['fetched']} != referenced {result['referenced']}",
                  file=sys.stderr)
            return 1
    args.out.write_text(render(lfs, hub, verify))
    print(json.dumps({"lfs": lfs, "hub": hub, "verify": verify}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
