"""The H200 report: preference only with current-source audit evidence, recomputed rooflines,
goal figures from each timing's own ceilings (synthetic device files, CPU only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hf_eval.bench import report as h200_report
from hf_eval.data.errors import DataError
from hf_eval.data.sources import solution_hash
from hf_eval.dataset import Dataset, open_dataset

ROOT = Path(__file__).resolve().parent.parent
GEMM = "dense_gemm_bf16_nt_n4096_k4096"
CEILINGS = {"bf16_flops": 800e12, "fp8_flops": 1600e12, "bytes_per_s": 4e12, "method": "test",
            "device": "test", "torch": "test"}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return open_dataset(ROOT)


def _audit_lines(dataset: Dataset, solution: str, status: str = "PASSED",
                 hash_: str | None = None) -> list[dict]:
    sol = dataset.solution(solution)
    return [{"definition": GEMM, "solution": solution, "workload": row.value.workload.uuid,
             "device": "cuda:0", "status": status, "timing": {"graph": {"median_ms": 1.0}},
             "hashes": {"solution": hash_ or solution_hash(sol)}}
            for row in dataset.workloads[GEMM]]


def _bench_line(solution: str, ms: float) -> dict:
    return {"definition": GEMM, "shape": "m8192", "axes": {"M": 8192}, "solution": solution,
            "status": "TIMED", "check": "is the baseline",
            "timing": {"graph": {"median_ms": ms}}, "ceilings": CEILINGS}


def _refusal(folder: Path) -> str:
    """The message of the ``DataError`` with which the report refuses ``folder``."""
    with pytest.raises(DataError) as info:
        h200_report.build(folder, ROOT)
    return str(info.value)


def _folder(tmp_path: Path, audit: list[dict], bench: list[dict]) -> Path:
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in audit))
    (tmp_path / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bench))
    (tmp_path / "ceilings-A.json").write_text(json.dumps(CEILINGS))
    return tmp_path


def test_preferred_needs_a_passing_audit_of_the_current_source(dataset, tmp_path):
    if not dataset.workloads.get(GEMM):
        pytest.fail(f"{GEMM} has no sample workloads to build the synthetic report from")
    name = dataset.task(GEMM).baseline.solution
    folder = _folder(tmp_path, _audit_lines(dataset, name, hash_="0" * 64),
                     [_bench_line(name, 0.2)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] is None  # the audited source is not the current one

    folder = _folder(tmp_path, _audit_lines(dataset, name), [_bench_line(name, 0.2)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == name and "passed" in pick["evidence"]

    # samples added after the H200 audit: named as not yet audited, not counted as failed
    total = len(dataset.workloads[GEMM])
    folder = _folder(tmp_path, _audit_lines(dataset, name)[:2], [_bench_line(name, 0.2)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == name
    assert f"passed 2/{total} sample workloads on the H200 (audit runner, unchanged " \
           f"tolerances; {total - 2} not yet audited there)" in pick["evidence"]

    failing = _audit_lines(dataset, name)
    failing[0]["status"] = "INCORRECT_NUMERICAL"
    folder = _folder(tmp_path, failing, [_bench_line(name, 0.2)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] is None  # one failed sample audit disqualifies


def test_an_audit_line_that_is_not_a_valid_record_stops_the_report(dataset, tmp_path):
    """A failed case whose line does not validate must not vanish (its solution would
    look clean and be preferred): the report names the line and is not written."""
    name = dataset.task(GEMM).baseline.solution
    lines = _audit_lines(dataset, name)
    lines[1]["status"] = "INCORRECT_NUMERICL"
    folder = _folder(tmp_path, lines, [_bench_line(name, 0.2)])
    assert _refusal(folder) == (
        f"{folder / 'results.jsonl'}:2: not a valid record: status: must be one of PASSED, "
        "INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, "
        "COMPILE_ERROR, TIMEOUT, DATA_ERROR (got 'INCORRECT_NUMERICL')")
    assert not (folder / "preferred-solutions.json").exists()


def test_goal_figure_uses_the_timings_own_ceilings(dataset, tmp_path):
    name = dataset.task(GEMM).baseline.solution
    flops = 2 * 8192 * 4096 * 4096
    ms = flops / (0.85 * CEILINGS["bf16_flops"]) * 1e3  # exactly 85% of the ceiling
    folder = _folder(tmp_path, _audit_lines(dataset, name), [_bench_line(name, ms)])
    h200_report.build(folder, ROOT)
    summary = json.loads((folder / "summary.json").read_text())
    rows = [g for g in summary["goals"] if g["definition"] == GEMM]
    assert len(rows) == 1 and rows[0]["preferred_figure"] == pytest.approx(0.85)
    assert rows[0]["met"] is False
    text = (folder / "performance.md").read_text()
    assert "generated on the device" in text and "timing only" in text


def _checked(solution: str, counted: float, event: float, span: float,
             shape: str = "m8192", status: str = "PASSED") -> dict:
    """A line of ``hf-eval bench run``: the audit's status and, per method, the counted,
    event and CUPTI times."""
    return {**_bench_line(solution, counted), "shape": shape, "status": status,
            "timing": {"graph": {"median_ms": counted, "event_median_ms": event,
                                 "cupti": {"kernel_ms": event - 0.01, "span_ms": span}}}}


def test_records_of_the_checked_path_are_read(dataset, tmp_path):
    """The report figure is the device time (the larger of the event median and the
    all-stream CUPTI span), with the counted, event, kernel and span times beside it; the
    sample audits of the checked path are validation only (no timing), and when nothing
    was timed the report says so rather than failing."""
    name = dataset.task(GEMM).baseline.solution
    untimed = [{**line, "timing": {}} for line in _audit_lines(dataset, name)]
    folder = _folder(tmp_path, untimed, [_checked(name, 0.25, 0.21, 0.22)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == name and "0.22 ms" in pick["evidence"]
    text = (folder / "performance.md").read_text()
    assert f"| m8192 | {name} | graph | 0.2200 | 0.2500 | 0.2100 | 0.2000 | 0.2200 |" in text

    folder = _folder(tmp_path, untimed, [])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] is None and "nothing to rank them by" in pick["evidence"]


def test_ranking_uses_device_time_and_skips_failed_or_partly_timed_solutions(dataset, tmp_path):
    """Host noise in the counted time (the H200 run of 2026-12-02 08:27: 2.19 ms counted for
    a 15 us kernel) does not decide a preference; a solution that failed a check at any
    benchmark shape is not ranked, and the evidence names the shape; nor is one timed at
    fewer shapes than the others (the 16:50 run: the GDN recurrent kernel, untimed at its
    slowest shape, led on the two shapes it shared)."""
    torch_name = dataset.task(GEMM).baseline.solution
    triton_name = "triton_tiled_gemm_bf16_n4096_k4096"
    audit = _audit_lines(dataset, torch_name) + _audit_lines(dataset, triton_name)
    noisy = [_checked(torch_name, 0.40, 0.40, 0.40), _checked(triton_name, 2.2, 0.30, 0.31)]
    folder = _folder(tmp_path, audit, noisy)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == triton_name, pick
    assert "(inputs generated on the device, timing only: m8192)" in pick["evidence"]
    assert f"{triton_name} 0.31 ms; {torch_name} 0.4 ms" in pick["evidence"]

    partial = noisy + [_checked(torch_name, 0.8, 0.8, 0.8, shape="m16384")]  # triton: no line
    folder = _folder(tmp_path, audit, partial)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == torch_name, pick
    assert "(inputs generated on the device, timing only: m8192, m16384)" in pick["evidence"]
    assert pick["evidence"].endswith(
        f"Not ranked: {triton_name} was timed at 1 of the 2 benchmark shapes the ranked ones "
        "were (not at m16384).")

    failed = partial + [_checked(triton_name, 0.5, 0.5, 0.5, shape="m16384",
                               status="INCORRECT_NUMERICAL")]
    folder = _folder(tmp_path, audit, failed)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == torch_name, pick
    assert pick["evidence"].endswith(
        f"Not ranked: {triton_name} failed a check at m16384: INCORRECT_NUMERICAL.")


def test_a_line_that_timed_another_source_is_neither_ranked_nor_a_baseline(dataset, tmp_path):
    """A benchmark line names the source it timed. Once the solution's source changes, the
    line is no timing of it (after the 2026-12-02 18:32 run the torch QSA baseline went from
    bf16 to FP32): it is not ranked, not the denominator of a speed-up, and the coverage
    table asks for the shape again. A line without the hash (the runs of 2026-12-02) is
    taken as it is."""
    torch_name = dataset.task(GEMM).baseline.solution
    triton_name = "triton_tiled_gemm_bf16_n4096_k4096"
    audit = _audit_lines(dataset, torch_name) + _audit_lines(dataset, triton_name)
    older = "0" * 64

    def line(solution: str, ms: float, source: str | None) -> dict:
        rec = _checked(solution, ms, ms, ms)
        return rec if source is None else {**rec, "hashes": {"solution": source}}

    def built(lines: list[dict]) -> tuple[dict, dict]:
        folder = _folder(tmp_path, audit, lines)
        h200_report.build(folder, ROOT)
        pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
        return pick, json.loads((folder / "summary.json").read_text())

    def current(name: str) -> str:
        return solution_hash(dataset.solution(name))

    pick, summary = built([line(torch_name, 0.4, current(torch_name)),
                           line(triton_name, 0.3, older)])
    assert pick["solution"] == torch_name, pick
    assert summary["benchmark"][GEMM]["m8192"][triton_name]["status"] == "STALE_SOURCE"
    (row,) = [r for r in summary["coverage"][GEMM] if r["solution"] == triton_name]
    assert row["shapes_failed"] == {"m8192": "STALE_SOURCE"}

    pick, summary = built([line(torch_name, 0.4, older),
                           line(triton_name, 0.3, current(triton_name))])
    assert pick["solution"] == triton_name, pick
    assert summary["benchmark"][GEMM]["m8192"][triton_name]["x_baseline"] is None

    pick, summary = built([line(torch_name, 0.4, None), line(triton_name, 0.3, None)])
    assert pick["solution"] == triton_name, pick
    assert summary["benchmark"][GEMM]["m8192"][triton_name]["x_baseline"] == \
        pytest.approx(0.4 / 0.3)


def test_a_tie_is_decided_by_the_audits_not_by_noise(dataset, tmp_path):
    """The 2026-12-02 15:42 run: torch SDPA led cuDNN by 1.6% on the geomean while audited on
    5 of 12 samples against cuDNN's 12. Inside the tie margin the better-audited solution is
    chosen, and the evidence says why; outside it the faster one still wins."""
    torch_name = dataset.task(GEMM).baseline.solution
    triton_name = "triton_tiled_gemm_bf16_n4096_k4096"
    audit = _audit_lines(dataset, torch_name) + _audit_lines(dataset, triton_name)[:2]
    close = [_checked(torch_name, 0.41, 0.41, 0.41), _checked(triton_name, 0.40, 0.40, 0.40)]
    folder = _folder(tmp_path, audit, close)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == torch_name, pick
    assert pick["evidence"].endswith(
        f"Within 3% of the fastest, {triton_name}: {torch_name}, a tie within run-to-run "
        f"spread, not a measured advantage; the audits decide it: {torch_name} passed the "
        "most sample workloads on the H200.")

    apart = [_checked(torch_name, 0.42, 0.42, 0.42), _checked(triton_name, 0.40, 0.40, 0.40)]
    folder = _folder(tmp_path, audit, apart)  # 5% apart: no tie
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] == triton_name and "Within" not in pick["evidence"], pick


def test_session_folders_are_read_after_the_folders_own_files_oldest_first(tmp_path):
    """results/h200 keeps each device run's records in <date>-<what>/: the report reads the
    folder's own files, then the earlier run before the later, so the later line supersedes."""
    (tmp_path / "bench.jsonl").write_text(json.dumps(_bench_line("a", 3.0)) + "\n")
    for name, ms in (("2026-12-02-1242-later", 1.0), ("2026-12-02-0232-earlier", 2.0)):
        session = tmp_path / name
        session.mkdir()
        (session / "bench.jsonl").write_text(json.dumps(_bench_line("a", ms)) + "\n")
        (session / "ceilings.json").write_text(json.dumps(CEILINGS))
    (tmp_path / "2026-12-02-notes").mkdir()  # not a run folder
    files = h200_report.device_files(tmp_path, "bench.jsonl")
    assert files == [tmp_path / "bench.jsonl",
                     tmp_path / "2026-12-02-0232-earlier" / "bench.jsonl",
                     tmp_path / "2026-12-02-1242-later" / "bench.jsonl"]
    latest = h200_report.load_bench(files)
    assert latest[(GEMM, "m8192", "a")]["timing"]["graph"]["median_ms"] == 1.0
    assert [p.parent.name for p in h200_report.device_files(tmp_path, "ceilings*.json")] == \
        ["2026-12-02-0232-earlier", "2026-12-02-1242-later"]


def test_a_session_of_another_gpu_is_refused_not_merged(dataset, tmp_path):
    """A later run's benchmark line supersedes an earlier one, so an H100 run filed among
    the H200 ones would replace H200 timings: the report refuses it, naming the file and the
    field, and refuses a run whose records name no GPU at all."""
    name = dataset.task(GEMM).baseline.solution
    folder = _folder(tmp_path, _audit_lines(dataset, name), [_bench_line(name, 0.2)])
    session = folder / "2026-12-02-1832-h100"
    session.mkdir()
    (session / "bench.jsonl").write_text(json.dumps(_bench_line(name, 0.1)) + "\n")
    (session / "ceilings.json").write_text(json.dumps(
        {**CEILINGS, "device": "NVIDIA H100 80GB HBM3"}))
    assert _refusal(folder) == (
        f"{session / 'ceilings.json'}: device: 'NVIDIA H100 80GB HBM3' is not the NVIDIA H200 "
        "this folder reports on; file another GPU's records outside it (results/h100/)")
    assert not (folder / "preferred-solutions.json").exists()

    (session / "ceilings.json").unlink()
    assert _refusal(folder) == (f"{session}: holds device records but no ceilings*.json "
                                "naming the GPU they ran on")

    (session / "ceilings.json").write_text(json.dumps({**CEILINGS, "device": "NVIDIA H200"}))
    h200_report.build(folder, ROOT)
    assert (folder / "preferred-solutions.json").exists()



def test_a_run_folder_of_audits_only_names_the_gpu_in_every_record(dataset, tmp_path):
    """A run folder without ceilings (audit lines only) is read when every audit record
    names the H200 in ``environment.gpu``, and refused when one names another card or none:
    nothing else in it says where it ran."""
    name = dataset.task(GEMM).baseline.solution
    folder = _folder(tmp_path, [], [_bench_line(name, 0.2)])
    run = folder / "2026-11-29-sample-audits"
    run.mkdir()
    lines = [{**r, "environment": {"gpu": "NVIDIA H200"}} for r in _audit_lines(dataset, name)]

    def write() -> None:
        (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))

    write()
    h200_report.build(folder, ROOT)
    row = json.loads((folder / "summary.json").read_text())["audit_roofline"][GEMM][name]
    assert row["passed"] > 0 and row["failed"] == 0

    lines[1]["environment"]["gpu"] = "NVIDIA H100 80GB HBM3"
    write()
    assert _refusal(folder) == (
        f"{run / 'results.jsonl'}:2: environment.gpu: 'NVIDIA H100 80GB HBM3' is not the "
        "NVIDIA H200 this folder reports on; file another GPU's records outside it "
        "(results/h100/)")

    del lines[1]["environment"]
    write()
    assert _refusal(folder) == (f"{run}: holds device records but no ceilings*.json "
                                "naming the GPU they ran on")


def test_coverage_names_each_missing_audit_and_benchmark_shape(dataset, tmp_path):
    """The generated coverage table is what the next device run owes: per GPU solution,
    the samples not audited with its current source, the shapes without a line and the
    shapes whose line failed its check; a solution with nothing missing has no row."""
    torch_name = dataset.task(GEMM).baseline.solution
    triton_name = "triton_tiled_gemm_bf16_n4096_k4096"
    total = len(dataset.workloads[GEMM])
    audit = _audit_lines(dataset, torch_name) + _audit_lines(dataset, triton_name)[:2]
    bench = [_checked(torch_name, 0.4, 0.4, 0.4, shape=s)
             for s in ("m4096", "m8192", "m16384", "m24576")]
    bench += [_checked(triton_name, 0.3, 0.3, 0.3),
              _checked(triton_name, 0.5, 0.5, 0.5, shape="m16384",
                       status="INCORRECT_NUMERICAL")]
    folder = _folder(tmp_path, audit, bench)
    h200_report.build(folder, ROOT)
    gaps = json.loads((folder / "summary.json").read_text())["coverage"]
    assert [g for g in gaps[GEMM] if g["solution"] == triton_name] == [
        {"solution": triton_name, "samples_passed": 2, "samples_failed": 0,
         "samples_not_audited": total - 2, "shapes_missing": ["m4096", "m24576"],
         "shapes_failed": {"m16384": "INCORRECT_NUMERICAL"}}]
    # the other H200 solutions of the definition have no line at all: every gap is open
    untouched = [g for g in gaps[GEMM] if g["solution"] != triton_name]
    assert {g["solution"] for g in untouched} == {
        s.name for s in dataset.solutions_for(GEMM)
        if h200_report.runs_on_gpu(s)} - {torch_name, triton_name}
    assert all(g["samples_passed"] == 0 and g["samples_not_audited"] == total
               for g in untouched)
    text = (folder / "performance.md").read_text()
    assert (f"| {GEMM} | {triton_name} | {total - 2} | m4096, m24576 "
            "| m16384 (INCORRECT_NUMERICAL) |") in text
    # a definition with no record at all lists every GPU solution of it, nothing audited
    other = "dense_gemm_bf16_nt_n4096_k12288"
    assert {g["solution"] for g in gaps[other]} == {
        s.name for s in dataset.solutions_for(other)}


GDN = "gdn_prefill_qk4_v8_d128_k_last"
FAST, SLOW = "flashinfer_gdn_prefill_qk4_v8_d128", "fla_chunk_fp32_ieee_gdn_prefill_qk4_v8_d128"


def _gdn_lines(dataset: Dataset, solution: str, failing: set[str]) -> list[dict]:
    sol = dataset.solution(solution)
    return [{"definition": GDN, "solution": solution, "workload": row.value.workload.uuid,
             "device": "cuda:0",
             "status": "INCORRECT_NUMERICAL" if row.value.workload.uuid in failing else "PASSED",
             "timing": {"graph": {"median_ms": 1.0}}, "hashes": {"solution": solution_hash(sol)}}
            for row in dataset.workloads[GDN]]


def _gdn_bench(solution: str, ms: float) -> dict:
    return {"definition": GDN, "shape": "one_seq_8192", "solution": solution, "status": "TIMED",
            "check": "", "timing": {"graph": {"median_ms": ms}}, "ceilings": CEILINGS}


def test_a_sample_outside_the_published_domain_never_decides_the_preferred_solution(
        dataset, tmp_path):
    """The faster solution fails only the cases labelled outside the published domain: it
    is preferred, and the evidence names those verdicts as outside the domain. Failing one
    case inside the domain still disqualifies it."""
    rows = dataset.workloads[GDN]
    outside = {r.value.workload.uuid for r in rows
               if dataset.receipts[r.value.workload.uuid].value.outside_domain}
    inside = [r.value.workload.uuid for r in rows if r.value.workload.uuid not in outside]
    assert outside and inside
    assert all(not h200_report.decides_preferred(dataset, u) for u in outside)
    assert all(h200_report.decides_preferred(dataset, u) for u in inside)
    assert not h200_report.decides_preferred(dataset, "not-a-workload-of-the-dataset")
    bench = [_gdn_bench(FAST, 1.0), _gdn_bench(SLOW, 20.0)]

    folder = _folder(tmp_path, _gdn_lines(dataset, FAST, outside)
                     + _gdn_lines(dataset, SLOW, set()), bench)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GDN]
    assert pick["solution"] == FAST
    assert f"passed {len(inside)}/{len(inside)} sample workloads" in pick["evidence"]
    assert (f"Outside the published domain (never deciding): {FAST} passed 0 of "
            f"{len(outside)} sample workloads there.") in pick["evidence"]
    summary = json.loads((folder / "summary.json").read_text())
    row = summary["audit_roofline"][GDN][FAST]
    assert row["outside_domain"] == {"passed": 0, "failed": len(outside)}
    assert row["failed"] == 0 and row["workloads"] == len(inside)

    folder = _folder(tmp_path, _gdn_lines(dataset, FAST, outside | {inside[0]})
                     + _gdn_lines(dataset, SLOW, set()), bench)
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GDN]
    assert pick["solution"] == SLOW  # a failure inside the domain still disqualifies


def test_records_of_a_removed_sample_workload_are_no_evidence(dataset, tmp_path):
    name = dataset.task(GEMM).baseline.solution
    lines = _audit_lines(dataset, name)
    for line in lines:
        line["workload"] = "0" + line["workload"][1:] + "-removed"
    folder = _folder(tmp_path, lines, [_bench_line(name, 0.2)])
    h200_report.build(folder, ROOT)
    pick = json.loads((folder / "preferred-solutions.json").read_text())["preferred"][GEMM]
    assert pick["solution"] is None
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["audit_roofline"][GEMM][name]["not_in_dataset"] == len(lines)


def test_batch_one_decode_is_held_to_the_launch_floor_and_larger_batches_to_bandwidth(
        dataset, tmp_path):
    """At batch 1 a decode kernel is judged by its share of the launch floor (one kernel
    in a replayed graph plus its compulsory bytes at copy bandwidth), at batch 8 by its
    share of copy bandwidth; a timing whose call measured no launch floor leaves the
    batch-1 goal not determined rather than judged."""
    from hf_eval.bench import roofline

    gdn = "gdn_decode_qk4_v8_d128_k_last"
    name = dataset.task(gdn).baseline.solution
    ceilings = {**CEILINGS, "launch_s": 2e-6}
    definition = dataset.definition(gdn)

    def line(shape: str, batch: int, ms: float, with_floor: bool = True) -> dict:
        return {"definition": gdn, "shape": shape, "axes": {"batch_size": batch},
                "solution": name, "status": "TIMED", "check": "is the baseline",
                "timing": {"graph": {"median_ms": ms}},
                "ceilings": ceilings if with_floor else CEILINGS}

    b1_bytes = roofline.cost(definition, {"batch_size": 1}).bytes
    floor_ms = (2e-6 + b1_bytes / 4e12) * 1e3
    b8_bytes = roofline.cost(definition, {"batch_size": 8}).bytes
    b8_ms = b8_bytes / (0.5 * 4e12) * 1e3  # half the copy bandwidth
    folder = _folder(tmp_path, [], [line("b1", 1, 1.25 * floor_ms), line("b8", 8, b8_ms)])
    (folder / "ceilings-A.json").write_text(json.dumps(ceilings))
    h200_report.build(folder, ROOT)
    rows = {(g["shape"], g["goal"].split()[0]): g
            for g in json.loads((folder / "summary.json").read_text())["goals"]
            if g["definition"] == gdn and g["shape"] in ("b1", "b8")}
    assert set(rows) == {("b1", "decode"), ("b8", "memory-bound")}
    assert rows["b1", "decode"]["best_figure"] == pytest.approx(0.8)  # within 1.25x
    assert rows["b8", "memory-bound"]["best_figure"] == pytest.approx(0.5)
    assert "Launch floor 2.00 us a kernel" in (folder / "performance.md").read_text()

    folder = _folder(tmp_path, [], [line("b1", 1, 1.25 * floor_ms, with_floor=False)])
    h200_report.build(folder, ROOT)
    [row] = [g for g in json.loads((folder / "summary.json").read_text())["goals"]
             if g["definition"] == gdn and g["shape"] == "b1"]
    assert row["goal"].startswith("decode at batch 1") and row["met"] is None
    assert row["best_figure"] is None
