"""The published scripts' command lines (``scripts/*.py``), each flag mapped onto ``hf_eval``.

Every script runs as a user runs it: ``python scripts/NAME.py ...`` in a subprocess, from
a folder outside the clone, with no ``PYTHONPATH`` (the script finds its clone's harness
itself), on the toy datasets of ``conftest.py`` and ``test_published_receipts.py``, on the
CPU (``--gpu cpu``, ``--device cpu``). Each test asserts what its flag changes: the records
written, the workloads and solutions selected, the lock files, the cache, the receipts,
or the one-line error and exit status 2 of a bad value.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from hf_eval.data.store import TensorStore
from hf_eval.isolation.workers import LOCK_DIRECTORY_VARIABLE, gpu_lock_path
from tests.conftest import GOOD_SOLUTION, build_toy_root, solution_json, write_json
from tests.test_published_receipts import (
    CAPTURED_PAIR,
    CAPTURED_SINGLE,
    PAIR,
    SINGLE,
    build_published,
)

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "scripts"
TOY = "toy_linear_n8_k16"
UUIDS = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(3)]
#: The toy's solutions after :func:`toy`: its own, a second CPU one, the engine's baseline.
OTHER, ENGINE = "torch_toy_other", f"sglang_{TOY}"
GPU_ONLY = "cuda_toy"


def script(name: str, *args: object, cwd: Path, cache: Path | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """``python scripts/NAME ARGS`` from ``cwd``; ``HF_EVAL_CACHE`` is ``cache`` or unset."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "HF_EVAL_CACHE", "HF_EVAL_ROOT", LOCK_DIRECTORY_VARIABLE)}
    env.update(COLUMNS="200", NO_COLOR="1", TERM="dumb")
    if cache is not None:
        env["HF_EVAL_CACHE"] = str(cache)
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def records(report: Path) -> list[dict]:
    return [json.loads(line) for line in report.read_text().splitlines() if line.strip()]


def cases(report: Path) -> set[tuple[str, str]]:
    """(solution, workload) of every record."""
    return {(r["solution"], r["workload"]) for r in records(report)}


def toy(tmp_path: Path) -> Path:
    """The toy root with three CPU solutions (its own, a second one, one named as the
    engine's baseline), a GPU-only one, dev = the second workload, and a diagnostic
    tolerance."""
    root = build_toy_root(tmp_path)
    for name in (OTHER, ENGINE):
        write_json(root / f"solutions/toy/{name}.json", solution_json(name, GOOD_SOLUTION))
    gpu = solution_json(GPU_ONLY, GOOD_SOLUTION)
    gpu["spec"]["target_hardware"] = ["NVIDIA_H200"]
    write_json(root / f"solutions/toy/{GPU_ONLY}.json", gpu)
    task_path = root / f"tasks/{TOY}.json"
    task = json.loads(task_path.read_text())
    task.update(dev=[UUIDS[1]], diagnostic_tolerance={"atol": 0.0, "rtol": 0.0})
    write_json(task_path, task)
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder outside the clone to run the scripts from."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def audit(root: Path, work: Path, *flags: object, cache: Path | None = None,
          report: Path | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    """``audit_solutions.py --root ROOT --gpu cpu --lock-directory locks --report R FLAGS``."""
    report = report or work / "report.jsonl"
    result = script("audit_solutions.py", "--root", root, "--gpu", "cpu",
                    "--lock-directory", work / "locks", "--report", report, *flags,
                    cwd=work, cache=cache)
    return result, report


def assert_bad_input(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr, result.stderr


def _assert_refused_without_cuda(name: str, root_flag: str, tmp_path: Path, work: Path,
                                 words: str) -> None:
    """scripts/NAME on a published root (given with ``root_flag``) and its default device
    refuses with ``words`` on a machine without CUDA (:func:`assert_bad_input`)."""
    result = script(name, root_flag, build_published(tmp_path), cwd=work,
                    cache=tmp_path / "cache")
    assert_bad_input(result, words)


# ------------------------------------------------------------------- audit_solutions.py
def test_audit_defaults_first_workload_every_solution_locks_and_clone_cache(tmp_path, work):
    root = toy(tmp_path)
    result, report = audit(root, work)  # no HF_EVAL_CACHE, no --cache-directory
    assert result.returncode == 0, result.stderr
    # --suite first: the first line of the workload file; every CPU solution, the
    # engine's baseline included; the GPU-only one is not run on the CPU
    assert cases(report) == {(s, UUIDS[0]) for s in ("torch_toy", OTHER, ENGINE)}
    for record in records(report):
        assert record["status"] == "PASSED" and record["device"] == "cpu"
        assert "timing" in record and "scale_probe" not in record
        assert "diagnostic" not in record
        assert record["reference"]["source"] == "computed"
    # the published scripts' two lock names, in --lock-directory
    assert sorted(p.name for p in (work / "locks").iterdir()) == ["cpu", "cpu.lock"]
    # the cache defaults to <root>/results/audit-cache; no reference is kept there
    cache = root / "results" / "audit-cache"
    assert (cache / "verified.json").is_file()
    assert not list(cache.glob("references/**/*.safetensors"))


def test_audit_suite_dev_and_all(tmp_path, work):
    root = toy(tmp_path)
    cache = tmp_path / "cache"
    result, report = audit(root, work, "--suite", "dev", "--solution", "torch_toy",
                           cache=cache)
    assert result.returncode == 0, result.stderr
    assert cases(report) == {("torch_toy", UUIDS[1])}  # the task's dev list
    result, report = audit(root, work, "--suite", "all", "--solution", "torch_toy",
                           "--validation-only", cache=cache)
    assert result.returncode == 0, result.stderr
    assert cases(report) == {("torch_toy", u) for u in UUIDS}


@pytest.mark.parametrize("value", ["fresh", "sample", "every"])
def test_audit_suite_outside_the_published_choices_is_refused(tmp_path, work, value):
    result, _ = audit(toy(tmp_path), work, "--suite", value)
    assert_bad_input(result, "argument --suite: invalid choice")


def test_audit_validation_only_skips_timing_and_only_default_drops_the_engine(tmp_path, work):
    root = toy(tmp_path)
    task_path = root / f"tasks/{TOY}.json"
    task = json.loads(task_path.read_text())
    write_json(task_path, {**task, "engine_baseline": OTHER})
    result, report = audit(root, work, "--validation-only", "--only-default",
                           cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    # sglang_<definition> and the task's engine_baseline are left out
    assert cases(report) == {("torch_toy", UUIDS[0])}
    assert all("timing" not in r for r in records(report))
    assert all(r["flags"]["validation_only"] for r in records(report))


def test_audit_only_default_with_nothing_left_is_bad_input(tmp_path, work):
    result, report = audit(toy(tmp_path), work, "--only-default", "--solution", ENGINE,
                           cache=tmp_path / "cache")
    assert_bad_input(result, "--only-default: no solution is left")
    assert not report.exists()


def test_audit_definition_workload_and_solution_select(tmp_path, work):
    root = build_published(tmp_path)
    cache = tmp_path / "cache"
    result, report = audit(root, work, "--definition", SINGLE, "--validation-only",
                           cache=cache)
    assert result.returncode == 0, result.stderr
    assert cases(report) == {(f"torch_{SINGLE}", CAPTURED_SINGLE)}
    # --workload keeps the suite's workloads among the UUIDs given
    result, report = audit(root, work, "--suite", "all", "--workload", CAPTURED_PAIR,
                           "--workload", CAPTURED_SINGLE, "--solution", f"torch_{PAIR}",
                           "--validation-only", cache=cache)
    assert result.returncode == 0, result.stderr
    assert cases(report) == {(f"torch_{PAIR}", CAPTURED_PAIR)}


def test_audit_workload_outside_the_suite_selects_nothing(tmp_path, work):
    root = toy(tmp_path)
    result, report = audit(root, work, "--workload", UUIDS[2], cache=tmp_path / "cache")
    assert_bad_input(result, f"--workload: none of {UUIDS[2]} is in suite first")
    assert not report.exists()


def test_audit_unknown_names_are_bad_input(tmp_path, work):
    root = toy(tmp_path)
    result, _ = audit(root, work, "--solution", "nope", cache=tmp_path / "cache")
    assert_bad_input(result, "unknown solution 'nope'")
    result, _ = audit(root, work, "--definition", "nope", cache=tmp_path / "cache")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_audit_candidates_are_audited_beside_the_solutions(tmp_path, work):
    root = toy(tmp_path)
    entries = []
    for folder in ("mine", "yours"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "main.py").write_text(GOOD_SOLUTION)
        entries += ["--candidate", tmp_path / folder / "main.py"]
    result, report = audit(root, work, "--definition", TOY, "--solution", "torch_toy",
                           "--validation-only", *entries, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert cases(report) == {(s, UUIDS[0])
                             for s in ("torch_toy", "candidate-mine", "candidate-yours")}
    result, _ = audit(root, work, *entries[:2], cache=tmp_path / "cache")
    assert_bad_input(result, "--candidate needs exactly one --definition")


def test_audit_scale_probe_strict_diagnostic_graph_timing(tmp_path, work):
    root = toy(tmp_path)
    result, report = audit(root, work, "--solution", "torch_toy", "--scale-probe",
                           "--strict-diagnostic", "--graph-timing", cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    (record,) = records(report)
    assert record["flags"]["scale_probe"] and record["flags"]["strict_diagnostic"]
    assert record["scale_probe"]["status"] == "PASSED"
    # the diagnostic tolerance (atol = rtol = 0) is reported, the verdict unchanged
    assert {d["name"] for d in record["diagnostic"]} == {"y", "positive_rows"}
    assert record["status"] == "PASSED"
    # --graph-timing changes nothing on the CPU: eager calls, no graph
    assert set(record["timing"]) == {"eager"} and "graph_capture_error" not in record


def test_audit_reference_cache_and_cache_directory(tmp_path, work):
    root = toy(tmp_path)
    chosen, ignored = tmp_path / "chosen", tmp_path / "ignored"
    for _ in range(2):
        result, report = audit(root, work, "--solution", "torch_toy", "--validation-only",
                               "--reference-cache", "--cache-directory", chosen,
                               cache=ignored)
        assert result.returncode == 0, result.stderr
    (record,) = records(report)
    assert record["reference"]["source"] == "cache"  # kept by the first run
    assert len(list(chosen.glob(f"references/{TOY}/*.safetensors"))) == 1
    assert (chosen / "verified.json").is_file()
    assert not ignored.exists() and not (root / "results").exists()


def test_audit_data_root_reads_the_tensors_there(tmp_path, work):
    root = toy(tmp_path)
    data = tmp_path / "materialised"
    shutil.move(root / "blob", data / "blob")
    cache = tmp_path / "cache"
    result, report = audit(root, work, "--solution", "torch_toy", "--validation-only",
                           cache=cache)
    assert result.returncode == 2  # the tensors are not under the root any more
    assert {r["status"] for r in records(report)} == {"DATA_ERROR"}
    result, report = audit(root, work, "--solution", "torch_toy", "--validation-only",
                           "--data-root", data, cache=cache)
    assert result.returncode == 0, result.stderr
    assert {r["status"] for r in records(report)} == {"PASSED"}
    result, _ = audit(root, work, "--data-root", tmp_path / "absent", cache=cache)
    assert_bad_input(result, "--data-root")


def test_audit_report_is_written_anew_and_required(tmp_path, work):
    root = toy(tmp_path)
    report = work / "deep" / "audit.jsonl"
    for _ in range(2):
        result, _ = audit(root, work, "--solution", "torch_toy", "--validation-only",
                          cache=tmp_path / "cache", report=report)
        assert result.returncode == 0, result.stderr
    assert len(records(report)) == 1
    result = script("audit_solutions.py", "--root", root, "--gpu", "cpu",
                    "--lock-directory", work / "locks", cwd=work)
    assert_bad_input(result, "the following arguments are required: --report")


def test_audit_root_must_be_a_dataset(tmp_path, work):
    result, _ = audit(tmp_path, work, cache=tmp_path / "cache")
    assert_bad_input(result, "not a dataset root")


def test_audit_gpu_and_lock_directory_are_required(tmp_path, work):
    result = script("audit_solutions.py", "--report", "r.jsonl", cwd=work)
    assert_bad_input(result, "the following arguments are required: --gpu, --lock-directory")


@pytest.mark.parametrize("value", ["../x", "cuda", "GPU-a/b", ""])
def test_audit_bad_gpu_values_are_refused(tmp_path, work, value):
    result, _ = audit(toy(tmp_path), work, "--gpu", value)
    assert_bad_input(result, "argument --gpu")
    assert not (work / "locks").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_audit_gpu_index_without_cuda_says_use_cpu(tmp_path, work):
    result = script("audit_solutions.py", "--root", toy(tmp_path), "--gpu", "0",
                    "--lock-directory", work / "locks", "--report", work / "r.jsonl",
                    cwd=work)
    assert_bad_input(result, "--gpu 0: this machine has no usable CUDA device")
    assert not (work / "r.jsonl").exists()


def test_audit_lock_held_by_another_run_is_refused(tmp_path, work):
    locks = work / "locks"
    locks.mkdir()
    with open(locks / "cpu.lock", "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        result, report = audit(toy(tmp_path), work, cache=tmp_path / "cache")
    assert_bad_input(result, f"--gpu cpu: {locks / 'cpu.lock'} is held by another run")
    assert not report.exists()


def test_harness_gpu_lock_lives_in_the_lock_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(LOCK_DIRECTORY_VARIABLE, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # not followed: every audit must find it
    default = gpu_lock_path("GPU-1")
    assert default == Path("/tmp/hf_eval-gpu-GPU-1.lock")
    monkeypatch.setenv(LOCK_DIRECTORY_VARIABLE, str(tmp_path / "locks"))
    assert gpu_lock_path("GPU-1") == tmp_path / "locks" / "hf_eval-gpu-GPU-1.lock"
    assert (tmp_path / "locks").is_dir()


def test_a_gpu_lock_file_is_its_users_alone(tmp_path):
    """Created 0600, an older one narrowed to it; a link in its place or a file of
    another owner is refused, naming the file: a worker of another uid cannot open it,
    whatever tree its folder comes to lie in."""
    import os
    import stat

    from hf_eval.isolation.walls import SandboxError
    from hf_eval.isolation.workers import open_lock_file

    fresh, older = tmp_path / "fresh.lock", tmp_path / "older.lock"
    older.write_text("")
    older.chmod(0o644)
    for path in (fresh, older):
        os.close(open_lock_file(path))
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    link = tmp_path / "link.lock"
    link.symlink_to(fresh)
    with pytest.raises(SandboxError, match=rf"^{link}: the GPU lock file cannot be opened"):
        open_lock_file(link)
    named_twice = tmp_path / "named-twice.lock"
    os.link(fresh, named_twice)
    with pytest.raises(SandboxError, match=rf"^{named_twice}: the GPU lock file has 2 names"):
        open_lock_file(named_twice)
    named_twice.unlink()
    fifo = tmp_path / "fifo.lock"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(SandboxError, match=rf"^{fifo}: the GPU lock file is not a regular"):
        open_lock_file(fifo)
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    theirs = tmp_path / "theirs.lock"
    theirs.write_text("")
    os.chown(theirs, 65534, 65534)
    with pytest.raises(SandboxError, match=rf"^{theirs}: the GPU lock file is owned by uid "
                       r"65534, not by this audit's \(uid 0\)"):
        open_lock_file(theirs)


def test_a_wait_for_another_audits_gpu_lock_ends_when_the_audit_is_stopped(tmp_path):
    """Another process holds the lock: the wait goes on until the audit's stop event is
    set (Ctrl-C), then ends with LockWaitStopped naming the file."""
    import threading

    from hf_eval.isolation import workers

    path = tmp_path / "gpu.lock"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); "
                               "time.sleep(60)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        stop, outcome = threading.Event(), []

        def wait():
            try:
                workers._locked(path, stop)
                outcome.append("locked")
            except workers.LockWaitStopped as exc:
                outcome.append(str(exc))

        waiter = threading.Thread(target=wait)
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive() and not outcome  # still waiting: the lock is held
        stop.set()
        waiter.join(10)
        assert outcome == [f"stopped while waiting for {path} (another audit of the GPU "
                           "holds it)"]
    finally:
        holder.kill()
        holder.wait()


def test_a_gpu_lock_file_removed_while_held_is_taken_again(tmp_path, monkeypatch):
    """The file a lock was taken on is removed before the lock is held (a cleaner of the
    temporary folder): the lock is taken again on the file the path names now, which the
    next audit will lock too."""
    import fcntl
    import os

    from hf_eval.isolation import workers

    path = tmp_path / "gpu.lock"
    flocked, real = [], fcntl.flock

    def flock(fd, operation):
        flocked.append(os.fstat(fd).st_ino)
        if len(flocked) == 1:
            path.unlink()  # between the open and the lock: the lock is on nothing
        real(fd, operation)

    monkeypatch.setattr(workers.fcntl, "flock", flock)
    fd = workers._locked(path)
    try:
        assert len(flocked) == 2 and os.fstat(fd).st_ino == path.stat().st_ino
    finally:
        os.close(fd)


def test_a_gpu_lock_directory_a_worker_could_read_is_refused(monkeypatch):
    """A worker may read the harness's own tree: a lock file there could be held by it
    (``flock`` needs only a read-only descriptor), and every audit of the GPU with it."""
    import hf_eval
    from hf_eval.isolation.walls import SandboxError

    inside = Path(hf_eval.__file__).parent / "never-created-locks"
    monkeypatch.setenv(LOCK_DIRECTORY_VARIABLE, str(inside))
    with pytest.raises(SandboxError, match="which every worker may read"):
        gpu_lock_path("GPU-1")
    assert not inside.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_audit_on_a_gpu_takes_the_harness_lock_in_the_lock_directory(tmp_path, work):
    result = script("audit_solutions.py", "--root", toy(tmp_path), "--gpu", "0",
                    "--lock-directory", work / "locks", "--report", work / "r.jsonl",
                    "--solution", "torch_toy", cwd=work, cache=tmp_path / "cache")
    names = sorted(p.name for p in (work / "locks").iterdir())
    assert names[:2] == ["0", "0.lock"] and names[2].startswith("hf_eval-gpu-"), names
    assert result.returncode in (0, 1), result.stderr


# --------------------------------------------------------------- benchmark_solutions.py
def bench(root: Path, work: Path, *flags: object, cache: Path) -> subprocess.CompletedProcess:
    return script("benchmark_solutions.py", "--root", root, "--gpu", "cpu", *flags,
                  cwd=work, cache=cache)


def test_benchmark_judges_solutions_on_the_workloads_with_engine_outputs(tmp_path, work):
    root = build_published(tmp_path)
    before = (root / "captures.jsonl").read_bytes()
    report = work / "bench.jsonl"
    result = bench(root, work, "--report", report, "--lock-directory", work / "locks",
                   cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert f"{PAIR} {CAPTURED_PAIR}: PASSED" in result.stdout
    assert "1 receipt(s) have no expected_output" in result.stdout  # the imported one
    # every solution, on the two captured workloads only, timed
    assert cases(report) == {(f"torch_{PAIR}", CAPTURED_PAIR),
                             (f"torch_{SINGLE}", CAPTURED_SINGLE)}
    assert all("timing" in r for r in records(report))
    assert (root / "captures.jsonl").read_bytes() == before  # receipts not written
    assert sorted(p.name for p in (work / "locks").iterdir()) == ["cpu", "cpu.lock"]


def test_benchmark_definition_solution_validation_only_data_root(tmp_path, work):
    root = build_published(tmp_path)
    data = tmp_path / "materialised"
    shutil.move(root / "blob", data / "blob")
    cache = tmp_path / "cache"
    report = work / "bench.jsonl"
    result = bench(root, work, "--definition", PAIR, "--solution", f"torch_{PAIR}",
                   "--validation-only", "--data-root", data, "--report", report,
                   "--cache-directory", cache, cache=tmp_path / "ignored")
    assert result.returncode == 0, result.stderr
    assert cases(report) == {(f"torch_{PAIR}", CAPTURED_PAIR)}
    assert all("timing" not in r for r in records(report))
    assert (cache / "verified.json").is_file() and not (tmp_path / "ignored").exists()
    result = bench(root, work, "--definition", PAIR, "--report", report, cache=cache)
    assert result.returncode == 2  # without --data-root the tensors are missing
    assert "DATA_ERROR" in result.stdout


def test_benchmark_without_engine_outputs_is_bad_input(tmp_path, work):
    result = bench(build_toy_root(tmp_path), work, "--report", work / "b.jsonl",
                   cache=tmp_path / "cache")
    assert result.returncode == 2
    assert "none of the 3 selected workload(s) has an engine output" in result.stdout
    assert not (work / "b.jsonl").exists()


def test_benchmark_a_wrong_engine_output_stops_before_the_solutions(tmp_path, work):
    root = build_published(tmp_path)
    receipts = [json.loads(t) for t in (root / "captures.jsonl").read_text().splitlines()]
    single = next(r for r in receipts if r["uuid"] == CAPTURED_SINGLE)
    wrong = TensorStore(root).write(torch.zeros(3, 8, dtype=torch.bfloat16),
                                    f"blob/workloads/{SINGLE}", "output")
    single["expected_output"] = wrong.model_dump()  # the right shape, the wrong values
    (root / "captures.jsonl").write_text("".join(json.dumps(r) + "\n" for r in receipts))
    result = bench(root, work, "--definition", SINGLE, "--report", work / "b.jsonl",
                   cache=tmp_path / "cache")
    assert result.returncode == 1
    assert f"{SINGLE} {CAPTURED_SINGLE}: FAILED" in result.stdout
    assert not (work / "b.jsonl").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_benchmark_gpu_defaults_to_index_0(tmp_path, work):
    _assert_refused_without_cuda("benchmark_solutions.py", "--root", tmp_path, work,
                                 "--gpu 0: this machine has no usable CUDA device")


# ------------------------------------------------------------------- capture_inputs.py
def test_capture_inputs_replay_root_and_definition(tmp_path, work):
    root = build_published(tmp_path)
    result = script("capture_inputs.py", "--replay-root", root, "--replay-definition",
                    SINGLE, "--device", "cpu", cwd=work, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert f"{SINGLE} {CAPTURED_SINGLE}: PASSED" in result.stdout
    assert CAPTURED_PAIR not in result.stdout
    receipts = {json.loads(t)["uuid"]: json.loads(t)
                for t in (root / "captures.jsonl").read_text().splitlines()}
    assert receipts[CAPTURED_SINGLE]["validation"]["replay"]["status"] == "PASSED"
    assert "replay" not in receipts[CAPTURED_PAIR]["validation"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_capture_inputs_replay_device_defaults_to_cuda(tmp_path, work):
    _assert_refused_without_cuda("capture_inputs.py", "--replay-root", tmp_path, work,
                                 "--device cuda: this machine has no usable CUDA device")


def test_capture_inputs_import_capture_into_output_root(tmp_path, work):
    source = tmp_path / "trace"
    from hf_eval.cli import main

    assert main(["--root", str(build_toy_root(tmp_path)), "export-fib", str(source)]) == 0
    out = tmp_path / "imported"
    result = script("capture_inputs.py", "--import-capture", source, "--output-root", out,
                    cwd=work, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert len((out / f"workloads/toy/{TOY}.jsonl").read_text().splitlines()) == 3
    assert len((out / "captures.jsonl").read_text().splitlines()) == 3
    result = script("capture_inputs.py", "--import-capture", source, cwd=work)
    assert_bad_input(result, "--import-capture needs --output-root")


def test_capture_inputs_serving_capture_refuses_in_one_line(tmp_path, work):
    result = script("capture_inputs.py", "--model-path", tmp_path / "model", "--output-root",
                    tmp_path / "out", "--port", "30001", cwd=work)
    assert_bad_input(result, "error: the serving capture")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    result = script("capture_inputs.py", "--model-path", tmp_path / "model", cwd=work)
    assert_bad_input(result, "the serving capture needs --model-path and --output-root")
    result = script("capture_inputs.py", "--model-path", "m", "--output-root", "o",
                    "--port", "http", cwd=work)
    assert_bad_input(result, "argument --port: invalid int value")


# ---------------------------------------------------------------------- capture_ltx.py
PROGRAM = """import sys
import torch
import torch.nn.functional as F

torch.manual_seed(0)
for n in map(int, sys.argv[1:]):
    q, k, v = (torch.randn(1, 2, n, 8) for _ in range(3))
    F.scaled_dot_product_attention(q, k, v)
"""


def test_capture_ltx_captures_a_program_attention_calls(tmp_path, work):
    program = tmp_path / "ltx_program.py"
    program.write_text(PROGRAM)
    out = tmp_path / "captured"
    result = script("capture_ltx.py", "--output-root", out, program, "4", "6", cwd=work)
    assert result.returncode == 0, result.stderr
    assert not (out / "workloads").exists()  # no definition of out matches: counted only
    result = script("capture_ltx.py", "--output-root", out, "--propose", "--max-calls", "1",
                    program, "4", "6", "5", cwd=work)
    assert result.returncode == 0, result.stderr
    (workloads,) = (out / "workloads").rglob("*.jsonl")
    assert len(workloads.read_text().splitlines()) == 1  # --max-calls 1
    (receipt,) = [json.loads(t) for t in (out / "captures.jsonl").read_text().splitlines()]
    assert receipt["expected_output"]  # the program's own output, kept for replay
    result = script("capture_ltx.py", "--replay-root", out, "--replay-definition",
                    workloads.stem, "--device", "cpu", cwd=work, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert "replay: 1 replayed, 0 failed" in result.stdout


def test_capture_ltx_bad_input(tmp_path, work):
    assert_bad_input(script("capture_ltx.py", "--output-root", tmp_path, cwd=work),
                     "a capture needs --output-root and PROGRAM")
    assert_bad_input(script("capture_ltx.py", "--output-root", tmp_path, "--max-calls", "0",
                            "p.py", cwd=work), "--max-calls must be at least 1")
    assert_bad_input(script("capture_ltx.py", "--output-root", tmp_path, tmp_path / "no.py",
                            cwd=work), "no such program")


# ------------------------------------------------------------------ task_acceptance.py
def test_task_acceptance_delegates_to_the_harness():
    sys.path.insert(0, str(SCRIPTS))
    try:
        from task_acceptance import compare_output
    finally:
        sys.path.remove(str(SCRIPTS))
    from hf_eval.data.errors import DataError

    ref = torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=torch.bfloat16)
    near = torch.tensor([1.0, 2.0, 4.0, 8.0625], dtype=torch.bfloat16)  # off by 0.0625
    loose = {"atol": 0.0, "rtol": 0.01}
    metrics = compare_output(near, ref, loose)  # 0.0625 <= 0.01 * 8
    assert metrics == {"max_absolute_error": 0.0625, "matched_ratio": 1.0,
                       "mismatched_elements": 0}
    with pytest.raises(AssertionError, match="1 of 4 elements outside tolerance"):
        compare_output(near, ref, {"atol": 0.0, "rtol": 0.001})
    assert compare_output(near, ref, {"atol": 0.0, "rtol": 0.001,
                                      "required_matched_ratio": 0.75})["matched_ratio"] == 0.75
    ints = torch.tensor([3, 1], dtype=torch.int64)
    assert compare_output(ints, ints.clone(), loose) == {"exact": True}
    with pytest.raises(AssertionError):
        compare_output(ints, torch.tensor([3, 2]), loose)
    with pytest.raises(AssertionError, match="dtype"):
        compare_output(near.float(), ref, loose)
    with pytest.raises(AssertionError, match="non-finite"):
        compare_output(torch.tensor([float("nan")]), torch.tensor([1.0]), loose)
    with pytest.raises(DataError, match="rtol"):
        compare_output(near, ref, {"atol": 0.0})


def test_every_script_has_help(work):
    for name in ("audit_solutions.py", "benchmark_solutions.py", "capture_inputs.py",
                 "capture_ltx.py"):
        result = script(name, "--help", cwd=work)
        assert result.returncode == 0 and "usage:" in result.stdout, result.stderr
    help_text = script("audit_solutions.py", "--help", cwd=work).stdout
    assert "--graph-timing" in help_text and "changes nothing here" in help_text
    module = script("task_acceptance.py", cwd=work)  # a module: says how to import it
    assert module.returncode == 0 and "from task_acceptance import compare_output" in module.stdout


def test_audit_root_defaults_to_the_clone_on_its_sample(tmp_path, work):
    definition = "noncausal_dense_attention_h32_d64"
    first = json.loads((REPO / "workloads/dense_attention" / f"{definition}.jsonl")
                       .read_text().splitlines()[0])["workload"]["uuid"]
    result = script("audit_solutions.py", "--gpu", "cpu", "--lock-directory", work / "locks",
                    "--report", work / "r.jsonl", "--definition", definition, "--solution",
                    "torch_sdpa_dense_h32_d64", "--validation-only", cwd=work,
                    cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    assert cases(work / "r.jsonl") == {("torch_sdpa_dense_h32_d64", first)}
