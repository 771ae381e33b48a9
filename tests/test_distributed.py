"""``audit --ray``: the audit's units on a local Ray cluster (CPU), against the local audit.

One Ray cluster for the module (``ray.init(num_cpus=2)`` in a private temporary
directory), stopped afterwards and checked to have left no process behind. Lane actors
are killed with SIGKILL mid-unit to show that a unit lost with its lane is put back with
exactly the cases that have no line yet.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from hf_eval.dataset import open_dataset
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.records import exit_code
from hf_eval.judge.report import read_report
from tests.conftest import GOOD_SOLUTION, solution_json, write_json

# CI installs the extra (.ci/setup --test): there a missing Ray is a failure, not a skip.
ray = __import__("ray") if os.environ.get("CI") else pytest.importorskip("ray")
from hf_eval.judge.distributed import RayAudit, RayAuditError, split_units  # noqa: E402

WRONG = GOOD_SOLUTION.replace("* scale", "* scale * 1.1")
CRASHES = "def run(x, w, scale):\n    raise RuntimeError('boom')\n"
#: Loads slowly (3 s at import), so a lane killed while loading it is surely mid-unit.
SLOW_LOAD = "import time\ntime.sleep(3)\n" + GOOD_SOLUTION
#: Fails to load if it finds itself anywhere near Ray: imported in its process, Ray's
#: variables in its environment, or the cluster's GCS reachable (@HOST@:@PORT@ filled in);
#: or if its thread setting is not the driver's (@THREADS@), as a local audit gives it.
NEAR_RAY = '''import os
import socket
import sys

found = ["ray is imported"] if "ray" in sys.modules else []
found += [k for k in os.environ if k.startswith("RAY")]
if os.environ.get("OMP_NUM_THREADS") != @THREADS@:
    found.append(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, not @THREADS@")
try:
    socket.create_connection(("@HOST@", @PORT@), timeout=2).close()
    found.append("reached the Ray GCS at @HOST@:@PORT@")
except OSError:
    pass
if found:
    raise RuntimeError("near Ray: " + "; ".join(found))
''' + GOOD_SOLUTION
UUIDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def cluster():
    """A two-CPU Ray cluster of this test module, in a directory of its own; afterwards
    no process that names that directory (GCS, raylet, workers) may be left."""
    if ray.is_initialized():
        pytest.fail("Ray is already initialised in this process")
    temp = tempfile.mkdtemp(prefix="hfray", dir="/tmp")  # short: Ray's socket paths
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp)
    ours = _processes_mentioning(temp)
    assert ours, "the leak check below would be vacuous: no process names the Ray directory"
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        deadline = time.monotonic() + 30
        while _processes_mentioning(temp) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _processes_mentioning(temp)
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"Ray processes left running: {left}"


def _add(root: Path, **sources: str) -> None:
    for name, src in sources.items():
        write_json(root / f"solutions/toy/{name}.json", solution_json(name, src))


def _config(tmp_path: Path, **kwargs) -> AuditConfig:
    return AuditConfig(report=tmp_path / "report.jsonl", **kwargs)


def _keys(lines: list[dict]) -> list[tuple[str, str, str]]:
    return [(r["definition"], r["workload"], r["solution"]) for r in lines]


def test_statuses_match_the_local_audit(cluster, toy_root, tmp_path):
    """The same units, once through the local lanes and once through Ray lanes, give the
    same status and reason per case; the candidate ran outside the Ray worker (it fails to
    load if it sees Ray in its process or environment, or can reach the cluster)."""
    host, port = cluster.rsplit(":", 1)
    _add(toy_root, wrong=WRONG, crashes=CRASHES,
         near_ray=NEAR_RAY.replace("@HOST@", host).replace("@PORT@", port).replace(
             "@THREADS@", repr(os.environ.get("OMP_NUM_THREADS"))))
    local = Audit(open_dataset(toy_root), AuditConfig(
        report=tmp_path / "local.jsonl", solutions="all", suite="first",
        validation_only=True))
    local.run()
    run = RayAudit(open_dataset(toy_root), AuditConfig(
        report=tmp_path / "ray.jsonl", solutions="all", suite="first",
        reference_cache=False, validation_only=True))
    records = run.run()
    by_case = {(r["solution"], r["workload"]): r for r in read_report(tmp_path / "ray.jsonl")}
    local_lines = read_report(tmp_path / "local.jsonl")
    expected = {(r["solution"], r["workload"]): r["status"] for r in local_lines}
    assert {k: r["status"] for k, r in by_case.items()} == expected
    assert {k: r.get("reason") for k, r in by_case.items()} == {
        (r["solution"], r["workload"]): r.get("reason") for r in local_lines}
    assert expected[("near_ray", UUIDS[0])] == "PASSED", by_case[("near_ray", UUIDS[0])]
    assert expected[("wrong", UUIDS[0])] == "INCORRECT_NUMERICAL"
    assert by_case[("crashes", UUIDS[0])]["status"] == "RUNTIME_ERROR"
    assert exit_code(records) == 1 and len(records) == 4
    # One workload, four solutions, two lanes: split into groups; the reference was
    # computed once (no disk cache here) and every group judged against that one.
    assert run.shared_truths == 1
    references = [r["reference"] for r in by_case.values() if "reference" in r]
    assert len(references) == 4 and all(ref["shared"] for ref in references)
    assert len({ref["seconds"] for ref in references}) == 1
    assert {r["placement"]["pid"] for r in by_case.values()} <= {
        info.placement.pid for info in run.lane_infos}
    # One secret per audit, shared by its lanes (and not the local audit's).
    secrets = {r["content"]["secret_sha256"] for r in by_case.values() if "content" in r}
    assert len(secrets) == 1 and secrets != {
        r["content"]["secret_sha256"] for r in local_lines if "content" in r}


def test_lost_lanes_are_retried_and_no_case_is_lost_or_written_twice(cluster, toy_root,
                                                                      tmp_path):
    """Kill the lane's process twice: first mid-unit before it produced a record (the unit
    is audited again whole), then right after its first record (only the rest is put
    back). Every case ends with exactly one line, and the killed lanes' workers end."""
    _add(toy_root, slow_load=SLOW_LOAD)
    run = RayAudit(open_dataset(toy_root), _config(
        tmp_path, solutions="torch_toy,slow_load", uuids=UUIDS[:2], validation_only=True),
        lanes=1)
    killed: list[int] = []
    orphans: list[int] = []

    def kill(pid: int) -> None:
        orphans.extend(_children(pid))
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    def before_any_record() -> None:  # as soon as the first lane starts a worker
        deadline = time.monotonic() + 300
        while not run.lane_infos and time.monotonic() < deadline:
            time.sleep(0.02)
        pid = run.lane_infos[0].placement.pid
        while not _children(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not seen:
            kill(pid)

    seen: list[dict] = []

    def on_record(record: dict) -> None:
        seen.append(record)
        if len(killed) == 1 and record["placement"]["pid"] != killed[0]:
            kill(record["placement"]["pid"])  # right after this lane's first record

    watcher = threading.Thread(target=before_any_record)
    watcher.start()
    records = run.run(on_record=on_record)
    watcher.join()
    lines = read_report(tmp_path / "report.jsonl")
    assert len(killed) == 2
    assert sorted(_keys(lines)) == sorted((d, u, s) for d in ["toy_linear_n8_k16"]
                                          for u in UUIDS[:2] for s in ("torch_toy",
                                                                       "slow_load"))
    assert [r.status.value for r in records] == ["PASSED"] * 4
    pids = [r["placement"]["pid"] for r in lines]
    assert killed[0] not in pids and pids.count(killed[1]) == 1
    assert len(run.retries) == 2, run.retries
    assert "2 of 2 solutions put back" in run.retries[0]
    assert "1 of 2 solutions put back" in run.retries[1]
    assert run.duplicates == 0
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in orphans) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in orphans if _alive(p)], "a killed lane's workers outlived it"


def test_interrupted_run_resumes_without_a_duplicate_line(cluster, toy_root, tmp_path):
    """Ctrl-C in the driver (here: raised from the record callback) stops the lanes and
    keeps every line written; ``audit --ray --resume`` audits only the rest."""
    report = tmp_path / "report.jsonl"

    def interrupt(record: dict) -> None:
        raise KeyboardInterrupt

    run = RayAudit(open_dataset(toy_root), _config(tmp_path), lanes=1)
    with pytest.raises(KeyboardInterrupt):
        run.run(on_record=interrupt)
    first = report.read_text().splitlines()
    assert len(first) == 1  # one lane: the line that was being reported when interrupted
    from hf_eval.cli import main

    # The same selection as the interrupted run (the library's default suite, "sample";
    # the command line's default is "dev").
    code = main(["--root", str(toy_root), "audit", "--ray", "--resume", "--suite", "sample",
                 "--report", str(report)])
    assert code == 0
    lines = report.read_text().splitlines()
    assert lines[:len(first)] == first  # appended, never rewritten
    records = [json.loads(line) for line in lines]
    assert sorted(_keys(records)) == sorted(("toy_linear_n8_k16", u, "torch_toy")
                                            for u in UUIDS)
    assert all(r["status"] == "PASSED"
               and r["timing"]["eager"]["trials"] - r["timing"]["eager"]["extra_trials"] == 2
               for r in records)  # timed through the Ray lanes as through local ones


def test_split_units_fill_the_lanes_and_keep_whole_units_otherwise(toy_root):
    _add(toy_root, b=GOOD_SOLUTION + "# b\n", c=GOOD_SOLUTION + "# c\n")
    ds = open_dataset(toy_root)
    units = Audit(ds, AuditConfig(report=Path("unused"), solutions="all")).plan()
    assert len(units) == 3 and all(len(s) == 3 for _, _, s, _ in units)
    whole = split_units(units, lanes=1)  # 3 units >= 2 lanes' worth: kept whole
    assert [(len(u.solutions), u.groups) for u in whole] == [(3, 1)] * 3
    split = split_units(units[:1], lanes=2)  # one unit, two lanes: one solution each
    assert [(u.group, u.groups, [s.name for s in u.solutions]) for u in split] == [
        (g, 3, [n]) for g, n in enumerate(s.name for s in units[0][2])]


def test_command_line_refuses_gpus_and_ray_together(toy_root, capsys):
    from hf_eval.cli import main

    assert main(["--root", str(toy_root), "audit", "--ray", "--gpus", "0"]) == 2
    assert "--ray takes its GPUs from the cluster" in capsys.readouterr().err
    with pytest.raises(RayAuditError, match="one device type"):
        RayAudit(open_dataset(toy_root), AuditConfig(report=Path("r"), devices=["cuda:1"]))
    with pytest.raises(RayAuditError, match="Ray Client"):
        RayAudit(open_dataset(toy_root), AuditConfig(report=Path("r")), address="ray://h:1")


def test_the_plain_audit_never_imports_ray(toy_root, tmp_path):
    code = f"""
import sys
from hf_eval.cli import main
assert main(["--root", {str(toy_root)!r}, "audit", "--validation-only", "--suite", "first",
             "--report", {str(tmp_path / "r.jsonl")!r}]) == 0
assert "ray" not in sys.modules, "the plain audit imported ray"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the per-GPU lock needs a GPU")
def test_gpu_lock_holds_between_the_driver_and_a_ray_lane(cluster):  # pragma: no cover
    """While this process holds a GPU's timing lock, a Ray task given that GPU cannot
    take it; once released, it can (the lock is the physical GPU's, whoever asks)."""
    from hf_eval.isolation.workers import gpu_lock

    @ray.remote(num_gpus=1, num_cpus=0)
    def try_lock(wait: float) -> tuple[str, bool]:
        import torch as t

        from hf_eval.isolation.workers import gpu_lock as lock
        taken = threading.Event()

        def hold() -> None:
            with lock(t.device("cuda", 0)):
                taken.set()
        threading.Thread(target=hold, daemon=True).start()
        return str(t.cuda.get_device_properties(0).uuid), taken.wait(wait)

    uuid, _ = ray.get(try_lock.remote(30))
    index = next(i for i in range(torch.cuda.device_count())
                 if str(torch.cuda.get_device_properties(i).uuid) == uuid)
    with gpu_lock(torch.device("cuda", index)):
        assert ray.get(try_lock.remote(3))[1] is False
    assert ray.get(try_lock.remote(30))[1] is True
