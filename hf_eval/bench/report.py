"""``hf-eval bench report``: audit reports + benchmark timings + ceilings -> the H200 report.

Why a separate module: ``summarize`` (hf_eval/judge/summary.py) turns audit reports into coverage
and paired speed-ups; the H200 report adds what only a device run has (the measured
ceilings, the roofline fraction of every timing, the benchmark shapes), chooses a
preferred solution per definition from that evidence, judges the goals of
``goals.json`` (data: which figure, which definitions, which threshold) and lists what the
records still lack (``coverage``: the next device run's queue). Nothing is
measured here: it reads the device runs' files in results/h200 and the dataset.

Inputs (``--dir``, default <root>/results/h200), each read from the folder itself and then
from every device run's folder in it (``<date>-<what>/`` holding records, named so that
they sort oldest first; a later benchmark line supersedes an earlier one): results.jsonl
(audit lines), bench.jsonl (benchmark lines, inputs generated on the device for timing
only), ceilings*.json (one per device call), env*.txt; and from the report's own folder
(``--out``, default <root>/results/h200/report): commands.txt (the exact commands); from
the document's folder (``--doc``, default <root>/docs/h200): notes.md (hand-written
commentary, appended to performance.md). Outputs: summary.json and
preferred-solutions.json in the report's folder, performance.md in the document's.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from hf_eval.bench import roofline
from hf_eval.bench.run import best_method, best_ms, device_ms, runs_on_gpu
from hf_eval.bench.shapes import BenchShape, load_shapes, shape_path, structure_counts
from hf_eval.data.errors import DataError
from hf_eval.data.schema import Model, NonEmpty, load_json
from hf_eval.data.sources import solution_hash
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.judge.records import Status
from hf_eval.judge.report import geomean, read_records, read_report
from hf_eval.judge.summary import summarize_records

GOALS_PATH = Path(__file__).with_name("goals.json")
#: Relative difference under which two timings count as a tie (METHOD.md: time twice).
TIE = 0.03
#: The GPU every run folder's records must come from (its ceilings' ``device``, its audit
#: records' ``environment.gpu``).
HARDWARE = "NVIDIA H200"
#: The files of a run folder that hold device records.
RECORD_FILES = ("results.jsonl", "bench.jsonl")
#: A device run's folder: its date first, so that the names sort oldest first.
RUN_FOLDER = re.compile(r"\d{4}-\d{2}-\d{2}-")
#: Beside a timed solution that the dataset does not ship.
NOT_SHIPPED = " (not shipped: results/h200/2026-11-29-rejected-solutions/)"
GENERATED_NOTE = ("Benchmark-shape inputs were generated on the device by `hf-eval bench run` "
                  "(fixed seed) for timing only: they are not committed and are not correctness "
                  "evidence; the only check on them is each output against the torch "
                  "baseline's under the task tolerance (column 'check').")


class Goal(Model):
    """One goal of ``goals.json``: a figure per benchmark shape (or per definition, for
    ``geomean_speedup``) judged against ``threshold``.

    ``ceiling_fraction``: achieved FLOP/s over the measured ``ceiling``;
    ``throughput_ratio``: the time of the solution named ``against*`` over the time of
    each solution; ``copy_share``: compulsory bytes per second over the measured copy
    bandwidth; ``launch_share``: the launch floor (one kernel's launch in a replayed graph
    plus the compulsory bytes over the copy bandwidth, :func:`roofline.launch_floor_s`)
    over the measured time; ``geomean_speedup``: geometric mean over the shapes of the
    speed-up against the task's baseline solution.
    """

    goal: NonEmpty
    """What the goal asks, in words (the report's row title)."""
    measure: Literal["ceiling_fraction", "throughput_ratio", "copy_share", "launch_share",
                     "geomean_speedup"]
    """The figure judged (see the class's text)."""
    threshold: float
    """The least figure that meets the goal."""
    families: list[NonEmpty] = []
    """Op families it applies to (every definition of each)."""
    definitions: list[NonEmpty] = []
    """Definitions it applies to, by name."""
    any_axis_at_least: dict[str, int] = {}
    """A shape counts only where some axis named here reaches its value (none named: every
    shape); applies together with ``any_axis_at_most``."""
    any_axis_at_most: dict[str, int] = {}
    """A shape counts only where some axis named here that the shape has is at most its
    value (none named: every shape); applies together with ``any_axis_at_least``."""
    ceiling: Literal["bf16_flops", "fp8_flops"] | None = None
    """(``ceiling_fraction`` only, required there) The measured ceiling the achieved rate
    is held against."""
    against: NonEmpty | None = None
    """(``throughput_ratio`` only, required there) The name prefix of the solution whose
    time is the reference."""

    @model_validator(mode="after")
    def _complete(self) -> Goal:
        if not self.families and not self.definitions:
            raise ValueError("names no families and no definitions: it applies to nothing")
        if self.measure == "ceiling_fraction" and self.ceiling is None:
            raise ValueError("a ceiling_fraction goal needs 'ceiling'")
        if self.measure == "throughput_ratio" and self.against is None:
            raise ValueError("a throughput_ratio goal needs 'against' (a solution name prefix)")
        return self

    def applies_to(self, definition: str, op_type: str) -> bool:
        return definition in self.definitions or op_type in self.families

    def covers(self, axes: dict[str, int]) -> bool:
        """Whether a shape with these axes counts: any axis of ``any_axis_at_least``
        reaches its value, and any of ``any_axis_at_most`` it has stays within its."""
        at_least = not self.any_axis_at_least or any(
            axes.get(axis, 0) >= value for axis, value in self.any_axis_at_least.items())
        at_most = not self.any_axis_at_most or any(
            axis in axes and axes[axis] <= value
            for axis, value in self.any_axis_at_most.items())
        return at_least and at_most


class Goals(Model):
    """``goals.json``."""

    note: str = ""
    """Free text for a reader of the file: how the goals are applied and judged (the code
    does not read it)."""
    goals: list[Goal] = Field(min_length=1)
    """The goals the report judges (at least one)."""


def load_goals(path: Path = GOALS_PATH) -> list[Goal]:
    return load_json(Goals, path).goals


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, spec)


def _holds_records(folder: Path) -> bool:
    return (any((folder / name).is_file() for name in RECORD_FILES)
            or any(p.is_file() for p in folder.glob("ceilings*.json")))


def run_folders(folder: Path) -> list[Path]:
    """The device runs' record folders in ``folder`` (``<date>-<what>/`` holding records),
    oldest first: by name, which starts with the date (and, for runs of one day, the
    start time)."""
    found = [p for p in folder.iterdir() if p.is_dir() and RUN_FOLDER.match(p.name)
             and _holds_records(p)] if folder.is_dir() else []
    return sorted(found, key=lambda p: p.name)


def _audit_gpus(path: Path) -> list[tuple[int, str | None]]:
    """(line, ``environment.gpu``) of every audit record of ``path`` that parses (a line
    that does not is the report's to refuse, with the record's own message)."""
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rec = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            env = rec.get("environment")
            found.append((number, env.get("gpu") if isinstance(env, dict) else None))
    return found


def check_runs_gpu(folder: Path) -> None:
    """Every run folder holding device records names ``HARDWARE``: in its ceilings, and in
    every audit record that names its GPU; a folder without ceilings holds audit records
    only, each naming the GPU.

    Why: a benchmark line names no card, and a line of a later run supersedes an earlier
    one, so an H100 run filed here would silently replace H200 timings (a machine asked
    for as an H200 may be an H100)."""
    missing = "holds device records but no ceilings*.json naming the GPU they ran on"
    for run in run_folders(folder):
        ceilings = sorted(run.glob("ceilings*.json"))
        for path in ceilings:
            device = json.loads(path.read_text()).get("device")
            if device != HARDWARE:
                raise DataError(path, f"{device!r} is not the {HARDWARE} this folder reports "
                                "on; file another GPU's records outside it (results/h100/)",
                                field="device")
        if not ceilings and (run / "bench.jsonl").is_file():
            raise DataError(run, missing)
        results = run / "results.jsonl"
        if results.is_file():
            for number, gpu in _audit_gpus(results):
                if gpu is None and not ceilings:
                    raise DataError(run, missing)
                if gpu is not None and gpu != HARDWARE:
                    raise DataError(results, f"{gpu!r} is not the {HARDWARE} this folder "
                                    "reports on; file another GPU's records outside it "
                                    "(results/h100/)", line=number, field="environment.gpu")


def device_files(folder: Path, pattern: str) -> list[Path]:
    """``folder``'s own files matching ``pattern``, then each run folder's, oldest
    first: the order in which a later record supersedes an earlier one."""
    return [p for where in (folder, *run_folders(folder))
            for p in sorted(where.glob(pattern)) if p.is_file()]


def load_bench(paths: list[Path]) -> dict[tuple[str, str, str], dict]:
    """(definition, shape, solution) -> the last benchmark line (a rerun supersedes)."""
    latest: dict[tuple[str, str, str], dict] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                latest[(rec["definition"], rec.get("shape", "-"), rec.get("solution", "-"))] = rec
    return latest


def _paired(sols: dict, recs: dict, passed: list[str], solution: str,
            other: str | None) -> dict | None:
    """Speed-up of ``solution`` over ``other`` on the workloads both passed (geomean, range)."""
    if not other or other == solution or other not in sols:
        return None
    ratios = []
    for w in passed:
        base = sols[other].get(w)
        if base is None or base["status"] != Status.PASSED.value:
            continue
        a, b = best_ms(base.get("timing", {})), best_ms(recs[w].get("timing", {}))
        if a and b:
            ratios.append(a / b)
    return {"against": other, "geomean": geomean(ratios), "min": min(ratios),
            "max": max(ratios), "paired": len(ratios)} if ratios else None


def decides_preferred(dataset: Dataset, workload: str) -> bool:
    """Whether an audit record of ``workload`` counts as evidence for choosing a preferred
    solution: the workload is one of the dataset's and its receipt does not label it
    outside the published curated domain (``provenance.outside_domain``).

    Why: a sample case outside the domain (a GDN state far larger than a model holds) is
    kept as a stress test of a kernel's precision, but the published data holds no such
    input, so a library that fails only there still passes everything a user runs; letting
    that case decide handed GDN prefill's H200 choice to a kernel many times slower. A
    record of a workload the dataset no longer has (a removed sample case) is no evidence
    for the current sample either. Outside-domain verdicts are still reported
    (``outside_domain`` of each solution's row), never counted."""
    if not any(r.value.workload.uuid == workload
               for rows in dataset.workloads.values() for r in rows):
        return False
    receipt = dataset.receipts.get(workload)
    return receipt is None or receipt.value.outside_domain is None


def deciding_workloads(dataset: Dataset, definition: str) -> list[str]:
    """The UUIDs of ``definition``'s workloads whose records decide a preferred solution."""
    return [r.value.workload.uuid for r in dataset.workloads.get(definition, [])
            if decides_preferred(dataset, r.value.workload.uuid)]


def audit_table(dataset: Dataset, records: list[dict], ceilings: dict) -> dict:
    """Per definition and solution: coverage, median time, roofline fraction, speed-ups.

    Counts and times cover the workloads that decide a preferred solution
    (:func:`decides_preferred`); a solution's verdicts on workloads outside the published
    domain are listed under ``outside_domain`` and records of workloads the dataset no
    longer has are counted under ``not_in_dataset``."""
    latest: dict[tuple[str, str, str], dict] = {}
    known = {r.value.workload.uuid for rows in dataset.workloads.values() for r in rows}
    for rec in records:
        latest[(rec["definition"], rec["solution"], rec["workload"])] = rec
    rows_by_uuid = {r.value.workload.uuid: r for rows in dataset.workloads.values() for r in rows}
    entries = roofline.load()
    costs: dict[str, roofline.Cost] = {}
    out: dict = defaultdict(dict)
    grouped: dict = defaultdict(lambda: defaultdict(dict))
    outside: dict = defaultdict(lambda: defaultdict(dict))
    removed: dict = defaultdict(lambda: defaultdict(int))
    for (definition, solution, workload), rec in latest.items():
        if workload not in known:
            removed[definition][solution] += 1
        elif decides_preferred(dataset, workload):
            grouped[definition][solution][workload] = rec
        else:
            outside[definition][solution][workload] = rec
    for definition in set(outside) | set(removed):
        for solution in set(outside[definition]) | set(removed[definition]):
            grouped[definition].setdefault(solution, {})
    for definition, sols in sorted(grouped.items()):
        task = dataset.task(definition)
        total = len(deciding_workloads(dataset, definition))
        for solution, recs in sorted(sols.items()):
            current = dataset.solutions.get(solution)
            stale = [w for w, r in recs.items() if current is None
                     or r.get("hashes", {}).get("solution") != solution_hash(current.value)]
            passed = [w for w, r in recs.items()
                      if r["status"] == Status.PASSED.value and w not in stale]
            times, fractions = [], []
            for w in passed:
                ms = best_ms(recs[w].get("timing", {}))
                if ms is None:
                    continue
                times.append(ms)
                if w not in costs and w in rows_by_uuid:
                    costs[w] = roofline.workload_cost(dataset, dataset.definition(definition),
                                                      rows_by_uuid[w], entries)
                if w in costs:
                    fractions.append(roofline.fraction(costs[w].time_s(ceilings), ms))

            def paired(other: str | None, sols=sols, recs=recs, passed=passed,
                       solution=solution) -> dict | None:
                return _paired(sols, recs, passed, solution, other)

            out[definition][solution] = {
                "passed": len(passed), "audited": len(recs), "workloads": total,
                "failed": len([w for w, r in recs.items()
                               if w not in stale and r["status"] != Status.PASSED.value]),
                "stale_records": len(stale),
                "statuses": sorted({r["status"] for r in recs.values()}),
                "median_ms_geomean": geomean(times) if times else None,
                "roofline_fraction_geomean": geomean(fractions) if fractions else None,
                "speedup_vs_baseline": paired(task.baseline.solution),
                "speedup_vs_engine_baseline": paired(task.engine_baseline),
                "failures": sorted({r.get("reason", "")[:160] for r in recs.values()
                                    if r["status"] != Status.PASSED.value})[:3],
                "outside_domain": {
                    "passed": len([r for r in outside[definition][solution].values()
                                   if r["status"] == Status.PASSED.value]),
                    "failed": len([r for r in outside[definition][solution].values()
                                   if r["status"] != Status.PASSED.value])},
                "not_in_dataset": removed[definition][solution]}
    return out


def _recost(dataset: Dataset, rec: dict, shapes: dict[tuple[str, str], BenchShape],
            first_ceilings: dict) -> None:
    """Recompute a benchmark line's roofline with the current formulas (in place).

    Lines written before the benchmark stored its counts and ceilings get the counts from
    the shape file (the families' inputs fix them exactly) and the first device call's
    ceilings.
    """
    definition = dataset.definition(rec["definition"])
    shape = shapes.get((rec["definition"], rec["shape"]))
    counts = rec.get("derived")
    if counts is None:
        counts = structure_counts(definition, shape) if shape else None
    c = roofline.cost(definition, rec["axes"], counts=counts)
    ceilings = rec.get("ceilings") or first_ceilings
    ms = device_ms(rec.get("timing", {}))
    rec.update(flops=c.flops, bytes=c.bytes, compute=c.compute,
               roofline_ms=c.time_s(ceilings) * 1e3)
    if ms:
        rec.update(fraction=roofline.fraction(c.time_s(ceilings), ms),
                   tflops=c.flops / (ms * 1e-3) / 1e12, tbps=c.bytes / (ms * 1e-3) / 1e12,
                   copy_share=c.bytes / (ms * 1e-3) / ceilings["bytes_per_s"])
        floor_s = roofline.launch_floor_s(c, ceilings)
        rec.update(launch_share=None if floor_s is None else floor_s / (ms * 1e-3))


#: The status of a benchmark line that timed another source than the solution's current
#: one: not a timing of it (no rank, no ratio), and the coverage table asks for it again.
STALE_SOURCE = "STALE_SOURCE"


def timed_source_changed(dataset: Dataset, rec: dict) -> bool:
    """Whether a benchmark line names the source it timed and that is not the current one.

    Lines written before ``hf-eval bench run`` recorded the hash (the runs of 2026-12-02)
    name none and are taken as they are; docs/h200/notes.md names the one known exception."""
    timed = rec.get("hashes", {}).get("solution")
    current = dataset.solutions.get(rec.get("solution", ""))
    return timed is not None and (current is None or timed != solution_hash(current.value))


def bench_table(dataset: Dataset, bench: dict, first_ceilings: dict) -> dict:
    """Per definition, shape and solution: time, rates, fraction, speed-ups, check."""
    bench = {key: ({**rec, "status": STALE_SOURCE,
                    "check": "timed another source than the solution's current one"}
                   if timed_source_changed(dataset, rec) else rec)
             for key, rec in bench.items()}
    shapes = {}
    for name in dataset.definitions:
        if shape_path(name).is_file():
            for shape in load_shapes(dataset.definition(name)):
                shapes[(name, shape.label)] = shape
    for rec in bench.values():
        if "axes" in rec and rec["definition"] in dataset.definitions:
            _recost(dataset, rec, shapes, first_ceilings)
    out: dict = defaultdict(lambda: defaultdict(dict))
    for (definition, shape, solution), rec in bench.items():
        out[definition][shape][solution] = rec
    table: dict = {}
    for definition, shapes in sorted(out.items()):
        task = dataset.task(definition) if definition in dataset.tasks else None
        table[definition] = {}
        for shape, sols in shapes.items():
            row = {}
            for solution, rec in sols.items():
                ms = device_ms(rec.get("timing", {}))
                method = best_method(rec.get("timing", {}))
                cupti = (method and method[1].get("cupti")) or {}
                entry = {"status": rec["status"], "ms": ms,
                         "counted_ms": best_ms(rec.get("timing", {})),
                         "fraction": rec.get("fraction"),
                         "method": method and method[0],
                         "event_ms": method and method[1].get("event_median_ms"),
                         "kernel_ms": cupti.get("kernel_ms"), "span_ms": cupti.get("span_ms"),
                         "tflops": rec.get("tflops"), "tbps": rec.get("tbps"),
                         "copy_share": rec.get("copy_share"),
                         "launch_share": rec.get("launch_share"),
                         "ceilings": rec.get("ceilings") or first_ceilings,
                         "check": rec.get("check", rec.get("reason", "")),
                         "axes": rec.get("axes"), "roofline_ms": rec.get("roofline_ms")}
                for key, other in (("x_baseline", task and task.baseline.solution),
                                   ("x_engine", task and task.engine_baseline)):
                    base = sols.get(other) if other else None
                    base_ms = device_ms(base.get("timing", {})) \
                        if base and base["status"] != STALE_SOURCE else None
                    entry[key] = base_ms / ms if base_ms and ms and other != solution else None
                row[solution] = entry
            table[definition][shape] = row
    return table


#: Statuses of a benchmark line whose time counts: PASSED (``hf-eval bench run``, the
#: audit's checked path) and TIMED (the in-process benchmark of the earliest records).
TIMED_STATUSES = (Status.PASSED.value, "TIMED")


def _usable(entry: dict) -> bool:
    return entry["status"] in TIMED_STATUSES and entry["ms"] is not None and \
        not str(entry["check"]).startswith("DISAGREES")


def choose_preferred(dataset: Dataset, audit: dict, bench: dict) -> dict:
    """Per definition: among solutions whose current source passed every sample workload
    audited on the H200 (at least one, none failed: samples added since are named in the
    evidence as not yet audited there) and every check at every benchmark shape, the
    fastest by geometric-mean device time (sample timings when a definition has no
    benchmark timing for them). The ranked solutions are those timed at every shape at
    which any of them was timed; one timed at fewer is named and not ranked (only when
    none is timed at all of them are they ranked over the shapes they share). Why: ranking
    over the shared shapes alone handed the 2026-12-02 16:50 run's GDN prefill choice to a
    recurrent kernel never timed at the one long sequence, where its token loop is longest.
    Timings within ``TIE`` of the fastest are a tie, which the audit decides: the solution
    with the most sample workloads passed on the H200 (then the faster). Why: a difference
    inside run-to-run spread must not hand the choice to a solution with less evidence."""
    chosen = {}
    for definition in sorted(dataset.definitions):
        sols = audit.get(definition, {})
        eligible = [s for s in sols if _eligible(audit, definition, s)]
        if not eligible:
            chosen[definition] = {"solution": None, "evidence": "no solution's current source "
                                  "has passed the sample workloads audited on the H200"}
            continue
        shapes = bench.get(definition, {})
        failed = {s: f"{shape}: {row[s]['status']}" for shape, row in shapes.items()
                  for s in eligible if s in row and not _usable(row[s])}
        eligible = [s for s in eligible if s not in failed]
        timed = [s for s in eligible if any(s in row for row in shapes.values())]
        reached = [shape for shape, row in shapes.items() if any(s in row for s in timed)]
        complete = [s for s in timed if all(s in shapes[shape] for shape in reached)]
        partial = {s: [shape for shape in reached if s not in shapes[shape]]
                   for s in timed if complete and s not in complete}
        timed = complete or timed
        common = [shape for shape, row in shapes.items() if timed
                  and all(s in row for s in timed)]
        scores = {}
        for s in timed if common else []:
            scores[s] = ("benchmark", geomean([shapes[shape][s]["ms"] for shape in common]),
                         len(common))
        if not scores:
            scores = {s: ("sample", sols[s]["median_ms_geomean"], sols[s]["passed"])
                      for s in eligible if sols[s]["median_ms_geomean"]}
        excluded = "".join(f" Not ranked: {s} failed a check at {why}." for s, why
                           in sorted(failed.items()))
        excluded += "".join(f" Not ranked: {s} was timed at {len(reached) - len(missing)} of "
                            f"the {len(reached)} benchmark shapes the ranked ones were (not "
                            f"at {', '.join(missing)})." for s, missing in sorted(partial.items()))
        untimed = sorted(set(eligible) - set(timed) - set(partial)) if shapes else []
        if untimed:
            excluded += f" Not timed at a benchmark shape: {', '.join(untimed)}."
        if not scores:  # validation-only audits, and no shape timed for every eligible one
            chosen[definition] = {
                "solution": None,
                "evidence": f"{', '.join(sorted(eligible))} passed every sample workload on "
                            "the H200, but none was timed at every benchmark shape (nor on "
                            f"the samples): nothing to rank them by.{excluded}"}
            continue
        fastest = min(scores, key=lambda s: scores[s][1])
        tied = [s for s in scores if scores[s][1] <= scores[fastest][1] * (1 + TIE)]
        best = max(tied, key=lambda s: (sols[s]["passed"], -scores[s][1]))
        basis, _, n = scores[best]
        tie = ""
        if len(tied) > 1:
            tie = (f" Within {TIE:.0%} of the fastest, {fastest}: "
                   f"{', '.join(sorted(set(tied) - {fastest}))}, a tie within run-to-run "
                   "spread, not a measured advantage")
            tie += (f"; the audits decide it: {best} passed the most sample workloads on the "
                    "H200." if best != fastest else ".")
        others = "; ".join(f"{s} {v:.4g} ms" for s, (_, v, _) in sorted(scores.items(),
                                                                         key=lambda x: x[1][1]))
        unaudited = sols[best]["workloads"] - sols[best]["passed"]
        beyond = sols[best].get("outside_domain", {})
        if beyond.get("passed") or beyond.get("failed"):
            excluded += (f" Outside the published domain (never deciding): {best} passed "
                         f"{beyond['passed']} of {beyond['passed'] + beyond['failed']} "
                         "sample workloads there.")
        chosen[definition] = {
            "solution": best,
            "evidence": f"passed {sols[best]['passed']}/{sols[best]['workloads']} sample "
                        f"workloads on the H200 (audit runner, unchanged tolerances"
                        f"{f'; {unaudited} not yet audited there' if unaudited else ''}); "
                        f"ranked by geometric-mean "
                        f"{'device ' if basis == 'benchmark' else ''}time over "
                        f"{n} {basis} "
                        f"{'shapes timed for each of them (inputs generated on the device, timing only: ' + ', '.join(common) + ')' if basis == 'benchmark' else 'workloads'}"  # noqa: E501
                        f": {others}.{tie}{excluded}"}
    return chosen


def coverage(dataset: Dataset, audit: dict, bench: dict) -> dict[str, list[dict]]:
    """Per definition: each shipped solution that runs on a GPU and what the H200 records
    lack for it: sample workloads not audited there with its current source, and benchmark
    shapes without a line of its own or whose line is not a timing (a failed check, a worker
    error). Why: which pairs a device run still owes is derived from the records, so
    the next run's queue is not a hand-kept list that drifts from them."""
    out: dict[str, list[dict]] = {}
    for definition in sorted(dataset.definitions):
        labels = ([s.label for s in load_shapes(dataset.definition(definition))]
                  if shape_path(definition).is_file() else [])
        timed = bench.get(definition, {})
        total = len(deciding_workloads(dataset, definition))
        rows = []
        for solution in sorted(s.name for s in dataset.solutions_for(definition)
                               if runs_on_gpu(s)):
            r = audit.get(definition, {}).get(solution)
            passed = r["passed"] if r else 0
            failed = r["failed"] if r else 0
            row = {"solution": solution, "samples_passed": passed, "samples_failed": failed,
                   "samples_not_audited": total - passed - failed,
                   "shapes_missing": [lb for lb in labels if solution not in timed.get(lb, {})],
                   "shapes_failed": {lb: timed[lb][solution]["status"] for lb in labels
                                     if solution in timed.get(lb, {})
                                     and not _usable(timed[lb][solution])}}
            if row["samples_not_audited"] or row["shapes_missing"] or row["shapes_failed"]:
                rows.append(row)
        if rows:
            out[definition] = rows
    return out


def _eligible(audit: dict, definition: str, solution: str) -> bool:
    """Passed the sample workloads audited on the H200 with its current source (at least
    one, none failed)."""
    r = audit.get(definition, {}).get(solution)
    return bool(r and r["workloads"] and r["passed"] and not r["failed"])


def _goal(goal: str, definition: str, shape: str, figures: dict[str, float], threshold: float,
          audit: dict, preferred: str | None) -> dict:
    """One goal row: the preferred solution's figure and the best figure of any shipped one."""
    best = max(figures, key=figures.get) if figures else None
    row = {"goal": goal, "definition": definition, "shape": shape, "threshold": threshold,
           "preferred": preferred, "preferred_figure": figures.get(preferred),
           "best": best, "best_figure": figures.get(best) if best else None,
           "best_audited": bool(best and _eligible(audit, definition, best))}
    value = row["preferred_figure"]
    row["met"] = None if value is None else value >= threshold
    return row


def _shape_figures(goal: Goal, usable: dict[str, dict]) -> dict[str, float] | None:
    """The per-shape goal's figure of each usable solution (None: the goal has no figure
    at this shape, e.g. no reference solution was timed)."""
    if goal.measure == "ceiling_fraction":
        return {s: e["tflops"] * 1e12 / e["ceilings"][goal.ceiling] for s, e in usable.items()}
    if goal.measure == "throughput_ratio":
        references = [e for s, e in usable.items() if s.startswith(goal.against)]
        reference = references[0]["ms"] if references else None
        if not reference:
            return None
        return {s: reference / e["ms"] for s, e in usable.items()}
    if goal.measure == "launch_share":  # {} where no launch floor was measured
        return {s: e["launch_share"] for s, e in usable.items() if e.get("launch_share")}
    return {s: e["copy_share"] for s, e in usable.items() if e["copy_share"]}


def goals(dataset: Dataset, bench: dict, audit: dict, preferred: dict,
          targets: list[Goal]) -> list[dict]:
    """The goals' rows: every per-shape goal at every shape it covers, then every
    ``geomean_speedup`` goal per definition. "met" judges the preferred solution (audited
    on the H200); the best figure of any shipped solution is shown beside it with its
    audit status."""
    per_shape = [g for g in targets if g.measure != "geomean_speedup"]
    result = []
    for definition, shapes in bench.items():
        if definition not in dataset.definitions:
            continue
        op = dataset.definition(definition).op_type
        pick = preferred.get(definition, {}).get("solution")
        applicable = [g for g in per_shape if g.applies_to(definition, op)]
        for shape, row in shapes.items():
            usable = {s: e for s, e in row.items() if _usable(e) and s in dataset.solutions}
            if not usable:
                continue
            axes = next(iter(usable.values()))["axes"] or {}
            for goal in applicable:
                figures = _shape_figures(goal, usable) if goal.covers(axes) else None
                if figures is not None:
                    result.append(_goal(goal.goal, definition, shape, figures,
                                        goal.threshold, audit, pick))
    for goal in (g for g in targets if g.measure == "geomean_speedup"):
        for definition in sorted(dataset.definitions):
            if not goal.applies_to(definition, dataset.definition(definition).op_type):
                continue
            pick = preferred.get(definition, {}).get("solution")
            baseline = dataset.task(definition).baseline.solution
            shapes = bench.get(definition, {})
            figures = {}
            for solution in {s for row in shapes.values() for s in row}:
                if solution not in dataset.solutions:
                    continue
                ratios = [1.0 if solution == baseline else row[solution]["x_baseline"]
                          for row in shapes.values()
                          if solution in row and _usable(row[solution])]
                if ratios and len(ratios) == len(shapes) and all(ratios):
                    figures[solution] = geomean(ratios)
            result.append(_goal(goal.goal, definition, f"{len(shapes)} benchmark shapes",
                                figures, goal.threshold, audit, pick))
    return result


def performance_markdown(dataset: Dataset, audit: dict, bench: dict, ceilings: list[dict],
                         preferred: dict, goal_rows: list[dict], gaps: dict[str, list[dict]],
                         commands: str, env: str, source: str = "this folder") -> str:
    c = ceilings[-1]
    lines = ["# H200 performance", "",
             f"Generated by `hf-eval bench report` from the device runs' files in {source}. "
             "Every number was measured on one NVIDIA H200; nothing here is a "
             "datasheet figure.", "",
             f"**Ceilings (measured in the same device call as the timings):** bf16 matmul "
             f"{c['bf16_flops'] / 1e12:.0f} TFLOP/s, FP8 matmul {c['fp8_flops'] / 1e12:.0f} "
             f"TFLOP/s, copy {c['bytes_per_s'] / 1e12:.2f} TB/s ({c['method']}) in the last call. "
             "Each call's own ceilings are in ceilings*.json; each benchmark timing's fraction "
             "uses its own call's; sample-workload fractions use the last call's."
             + (f" Launch floor {c['launch_s'] * 1e6:.2f} us a kernel (a replayed CUDA graph "
                "of one-element kernels); a call's launch share = (launch floor + compulsory "
                "bytes / copy bandwidth) / measured time." if "launch_s" in c else
                " No launch floor was measured in the last call: the launch-share goals are "
                "not determined."),
             "", "**Roofline:** time = max(FLOPs / ceiling, compulsory bytes / copy bandwidth) "
             "from hf_eval/families/<op_type>/<definition>.roofline.json (memory-bound entries: "
             "bytes only); fraction = "
             "roofline time / measured median (CUDA-graph replay where capture worked, else the "
             "prepared launch or eager calls).", "",
             f"**Benchmark shapes:** {GENERATED_NOTE}", "",
             "**Environment:**", "", "```", env.strip(), "```", "",
             "**Commands:**", "", "```", commands.strip(), "```", ""]
    lines += ["## Goals", "",
              "'met' judges the preferred H200 solution (passed every sample workload through "
              "the audit runner on the H200). 'best measured' is the best figure of any shipped "
              "solution at that shape, with whether it has passed that audit; a best figure "
              "without the audit is a measurement, not a result.", "",
              "| goal | definition | shape | preferred | figure | met | best measured "
              "(solution, figure, audited) |", "|---|---|---|---|---|---|---|"]
    for g in goal_rows:
        met = {True: "yes", False: "**no**", None: "not determined"}[g["met"]]
        best = (f"{g['best']}, {g['best_figure']:.2f}, {'yes' if g['best_audited'] else 'no'}"
                if g["best"] else "—")
        lines.append(f"| {g['goal']} | {g['definition']} | {g['shape']} | {g['preferred']} | "
                     f"{_fmt(g['preferred_figure'], '.2f')} | {met} | {best} |")
    lines += ["", "## Coverage: what the H200 records still lack", "",
              "Each shipped GPU solution with a sample workload not audited on the H200 "
              "with its current source, or a benchmark shape without a timing of its own "
              "(no line, or a line whose check failed). A ratio covers only the shapes that "
              "both sides have; a solution timed at fewer shapes than the others is not "
              "ranked.", "",
              "| definition | solution | samples not audited | shapes without a line "
              "| shapes whose line is not a timing |", "|---|---|---|---|---|"]
    for definition, rows in gaps.items():
        for g in rows:
            failed = ", ".join(f"{lb} ({st})" for lb, st in g["shapes_failed"].items())
            lines.append(f"| {definition} | {g['solution']} | {g['samples_not_audited'] or ''} "
                         f"| {', '.join(g['shapes_missing'])} | {failed} |")
    for definition in sorted(dataset.definitions):
        task = dataset.task(definition)
        pick = preferred.get(definition, {})
        lines += ["", f"## {definition}", "",
                  f"Preferred on the H200: **{pick.get('solution')}** — {pick.get('evidence')}",
                  f"Torch baseline: `{task.baseline.solution}`; engine baseline: "
                  f"`{task.engine_baseline}`.", "",
                  "Sample workloads (audit runner, `--device cuda`):", "",
                  "| solution | passed | median ms (geomean) | roofline fraction (geomean) | "
                  "× torch baseline | × engine baseline | failures |",
                  "|---|---|---|---|---|---|---|"]
        for solution, r in sorted(audit.get(definition, {}).items()):
            sb, se = r["speedup_vs_baseline"], r["speedup_vs_engine_baseline"]
            lines.append(
                f"| {solution} | {r['passed']}/{r['workloads']}"
                f"{' (stale: ' + str(r['stale_records']) + ')' if r['stale_records'] else ''} "
                f"| {_fmt(r['median_ms_geomean'], '.4f')} "
                f"| {_fmt(r['roofline_fraction_geomean'], '.3f')} "
                f"| {_fmt(sb and sb['geomean'], '.2f')} | {_fmt(se and se['geomean'], '.2f')} "
                f"| {'; '.join(r['failures'])[:200]} |")
        if not audit.get(definition):
            lines.append("| (no audit line on the H200 for this definition: see notes) "
                         "| | | | | | |")
        shapes = bench.get(definition, {})
        if shapes:
            lines += ["", "Benchmark shapes (generated on the device, timing only). Per call, "
                      "of the method named: **device ms** (the larger of the CUDA-event "
                      "median and the CUPTI span over all streams; rates, fractions and "
                      "ratios use it), the audit's counted ms (its own clock around each "
                      "request, host noise included), the event median, the CUPTI kernel "
                      "time and span:", "",
                      "| shape | solution | method | device ms | counted ms | event ms | "
                      "kernel ms | span ms | TFLOP/s | TB/s | roofline fraction "
                      "| × torch baseline | × engine baseline | check |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for shape, row in shapes.items():
                for solution, e in row.items():
                    shipped = "" if solution in dataset.solutions else NOT_SHIPPED
                    status = "" if e["status"] in TIMED_STATUSES else e["status"]
                    check = "" if e["status"] == Status.PASSED.value else str(e["check"])[:90]
                    lines.append(
                        f"| {shape} | {solution}{shipped} | {e['method'] or '—'} | "
                        f"{_fmt(e['ms'], '.4f')} | {_fmt(e['counted_ms'], '.4f')} | "
                        f"{_fmt(e['event_ms'], '.4f')} | {_fmt(e['kernel_ms'], '.4f')} | "
                        f"{_fmt(e['span_ms'], '.4f')} | "
                        f"{_fmt(e['tflops'], '.1f')} | {_fmt(e['tbps'], '.2f')} | "
                        f"{_fmt(e['fraction'], '.3f')} | {_fmt(e['x_baseline'], '.2f')} | "
                        f"{_fmt(e['x_engine'], '.2f')} | {status} {check} |")
    return "\n".join(lines) + "\n"


def _audit_records(path: Path) -> list[dict]:
    """The records of one results.jsonl. A line that is not a valid record is a
    ``DataError`` naming it: preferences are chosen from complete evidence only (a failed
    case left out would make its solution look clean)."""
    problems = read_records(path).problems
    if problems:
        first = problems[0]
        raise DataError(first.path, f"not a valid record: {first.field}: {first.rule}",
                        line=first.line)
    return read_report(path)


def _shown(path: Path, root: Path) -> str:
    """``path`` as a document names it: relative to the repository root when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def build(folder: Path, root: Path, goals_path: Path = GOALS_PATH, out: Path | None = None,
          doc: Path | None = None) -> list[Path]:
    """Read the device-run files in ``folder`` and ``out``'s commands.txt (``out``: default
    ``folder``); write summary.json and preferred-solutions.json to ``out`` and
    performance.md, with ``doc``'s notes.md appended, to ``doc`` (default ``out``)."""
    out = out or folder
    doc = doc or out
    dataset = open_dataset(root)
    targets = load_goals(goals_path)
    check_runs_gpu(folder)
    records = [r for p in device_files(folder, "results.jsonl") for r in _audit_records(p)]
    ceilings = [json.loads(p.read_text()) for p in device_files(folder, "ceilings*.json")]
    if not ceilings:
        raise DataError(folder, "no ceilings*.json (measure on the device first: "
                        "hf-eval bench run)")
    bench = bench_table(dataset, load_bench(device_files(folder, "bench.jsonl")), ceilings[0])
    audit = audit_table(dataset, records, ceilings[-1])
    preferred = choose_preferred(dataset, audit, bench)
    goal_rows = goals(dataset, bench, audit, preferred, targets)
    gaps = coverage(dataset, audit, bench)
    commands = (out / "commands.txt").read_text() if (out / "commands.txt").is_file() else ""
    env = "\n".join(p.read_text() for p in device_files(folder, "env*.txt"))
    summary = {"note": GENERATED_NOTE, "ceilings": ceilings, "commands": commands,
               "audit": summarize_records(records), "audit_roofline": audit,
               "benchmark": bench, "goals": goal_rows, "coverage": gaps}
    for where in (out, doc):
        where.mkdir(parents=True, exist_ok=True)
    written = [out / "summary.json", doc / "performance.md", out / "preferred-solutions.json"]
    written[0].write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    notes = (doc / "notes.md").read_text() if (doc / "notes.md").is_file() else ""
    source = "this folder" if doc == folder else _shown(folder, root)
    written[1].write_text(performance_markdown(dataset, audit, bench, ceilings, preferred,
                                               goal_rows, gaps, commands, env, source)
                          + ("\n" + notes if notes else ""))
    written[2].write_text(json.dumps({"hardware": HARDWARE, "commands": commands,
                                      "preferred": preferred}, indent=2) + "\n")
    return written
