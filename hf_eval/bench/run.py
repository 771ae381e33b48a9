"""``hf-eval bench run``: time solutions at realistic shapes, through the audit's checks.

For every benchmark shape of a definition (:mod:`hf_eval.bench.shapes`: inputs drawn on
the device with a fixed seed, for timing only), each chosen GPU solution is judged and
timed through the audit's own path (a confined worker, every call checked, fresh content
per timed call, the audit's clock: docs/verdicts.md), so its lines carry the audit's
statuses. The truth at these shapes is the task's baseline solution's output on the same
content (the definition's reference when the baseline does not run on the GPU), recorded
as ``truth``. Each line also carries the shape's roofline (:mod:`hf_eval.bench.roofline`)
under the ceilings measured in the same run.

Run on a GPU machine: ``hf-eval bench run --out DIR`` writes ``ceilings.json`` and
``bench.jsonl`` (one line per definition, shape and solution), and with ``--samples``
``results.jsonl`` (the sample workloads audited by the same workers).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from hf_eval.bench import roofline
from hf_eval.bench.shapes import BenchShape, generate, load_shapes, shape_paths
from hf_eval.data import memory
from hf_eval.data.schema import Definition, Solution, Timing
from hf_eval.data.sources import compile_reference, load_entry, solution_hash
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.judge.audit import Audit, AuditConfig, Case, Lane, gpu_target, select_workloads
from hf_eval.judge.records import Status, reported_time
from hf_eval.judge.report import environment

GPU_TARGETS = ("cuda", "NVIDIA H200")


# ------------------------------------------------------------------ timing (device)
def runs_on_gpu(solution: Solution) -> bool:
    """Whether the H200 benchmark runs it: "cuda", or the H200 however spelled
    ("NVIDIA H200", "NVIDIA_H200"); a Blackwell-only solution is not benchmarked here."""
    return any(t in GPU_TARGETS or gpu_target(t) == "h200"
               for t in solution.spec.target_hardware)


def best_method(timing: dict) -> tuple[str, dict] | None:
    """The method a record's one reported time comes from
    (:func:`hf_eval.judge.records.reported_time`: cold-L2 graph replay first), and its record."""
    best = reported_time({"timing": timing})
    return (best[0], timing[best[0]]) if best else None


def best_ms(timing: dict) -> float | None:
    """The counted median of :func:`best_method`."""
    best = best_method(timing)
    return best[1]["median_ms"] if best else None


def device_ms(timing: dict) -> float | None:
    """The device time per call of :func:`best_method`. A record of this harness counts
    each trial at its device time unless the guard flagged it (``clock`` names how it
    was taken), so that is its median. An older record (no ``clock``) counted the host's
    bound, noisy below 0.1 ms: its device time is the larger of its CUDA-event median and
    its CUPTI span."""
    best = best_method(timing)
    if best is None:
        return None
    record = best[1]
    if "clock" in record:
        return record["median_ms"]
    device = [v for v in (record.get("event_median_ms"),
                          (record.get("cupti") or {}).get("span_ms")) if v]
    return max(device) if device else record["median_ms"]


#: Benchmark timing: the audit's scheme with fewer warm-ups (every timed call still gets
#: fresh content, and the pool bounds calls per trial at large shapes).
BENCH_TIMING = {"warmup": 3, "iters": 20, "trials": 3}


def _truth(dataset: Dataset, definition: Definition, baseline: Solution | None,
           device: torch.device) -> Callable[[list[object]], tuple[torch.Tensor, ...]]:
    """What fresh inputs are judged against at benchmark shapes: the task's baseline (a
    dataset solution, trusted, run in this process), else the definition's reference."""
    fn = (load_entry(baseline).run if baseline is not None and runs_on_gpu(baseline)
          else compile_reference(definition))

    def truth(inputs: list[object]) -> tuple[torch.Tensor, ...]:
        on_device = [v.to(device) if isinstance(v, torch.Tensor) else v for v in inputs]
        with torch.no_grad():
            out = fn(*on_device)
        out = out if isinstance(out, tuple) else (out,)
        return tuple(t.clone() for t in out)

    return truth


def pick_solutions(dataset: Dataset, name: str, how: str | None) -> list[Solution]:
    """The GPU solutions of ``name`` to time: every one (``how`` None), or the
    comma-separated names and keywords in ``how`` (``baseline``: the task's baseline;
    ``preferred``: the task's preferred H200 solution). Names of other definitions'
    solutions are ignored, so one list serves a run over several definitions.

    The order is the order of judging at each shape: the preferred H200 solution, the
    baseline and the engine baseline first, then the others by name, so a run cut short
    by a time limit still holds the comparisons that decide a preference."""
    task = dataset.task(name)
    pick = task.preferred.get("h200")
    first = [pick.solution if pick else None, task.baseline.solution, task.engine_baseline]
    rank: dict[str, int] = {}
    for i, solution in enumerate(first):
        if solution:
            rank.setdefault(solution, i)
    solutions = sorted((s for s in dataset.solutions_for(name) if runs_on_gpu(s)),
                       key=lambda s: (rank.get(s.name, len(first)), s.name))
    if how is None:
        return solutions
    wanted = set()
    for word in (w.strip() for w in how.split(",") if w.strip()):
        if word == "baseline":
            wanted.add(task.baseline.solution)
        elif word == "preferred":
            wanted.update([pick.solution] if pick else [])
        else:
            wanted.add(word)
    return [s for s in solutions if s.name in wanted]


def bench_definition(dataset: Dataset, name: str, ceilings: dict, write,
                     how: str | None = None, samples=None, device: str = "cuda",
                     shapes: list[BenchShape] | None = None) -> None:
    """The chosen GPU solutions (:func:`pick_solutions`) at every benchmark shape,
    through the audit's isolated worker and checks (:class:`hf_eval.judge.audit.Lane`): the
    lines carry the audit's statuses. Workers live until the definition is done, so a
    solution compiles its kernels once, not once per shape.

    ``samples``: a function taking audit records; when given, the same workers first
    audit every sample workload of the definition (validation only, the task's own
    tolerances), so one run judges a solution on the dataset and times it at scale with
    one JIT compilation. ``device`` and ``shapes`` (default: the shape file) let the
    tests run it on the CPU at small shapes."""
    definition = dataset.definition(name)
    task = dataset.task(name).model_copy(update={"timing": Timing(**BENCH_TIMING)})
    solutions = pick_solutions(dataset, name, how)
    baseline = next((s for s in dataset.solutions_for(name)
                     if s.name == task.baseline.solution and runs_on_gpu(s)), None)
    device = torch.device(device)
    entries = roofline.load()
    audit = Audit(dataset, AuditConfig(report=Path("/dev/null"), devices=[str(device)],
                                       reference_cache=False, validation_only=True))
    lane = Lane(audit, device)
    truth = _truth(dataset, definition, baseline, device)
    try:
        if samples is not None and solutions:
            own_task, env = dataset.task(name), environment(device)
            for row in select_workloads(dataset, own_task, name, "sample", []):
                unit = (definition, own_task, solutions, row)
                for record in audit.audit_unit(lane, unit, env, set()):
                    samples(record)
        audit.config.validation_only = False
        for shape in shapes or load_shapes(definition):
            base = {"definition": name, "shape": shape.label, "axes": shape.axes,
                    "generated_on_device": True,
                    "truth": f"baseline {baseline.name}" if baseline else "reference"}
            try:
                generated = generate(definition, shape, str(device))
                named = dict(zip(definition.inputs, generated))
                c = roofline.cost(definition, shape.axes, named, entries)
                derived = roofline.derived_counts(definition, entries.get(name, {}), named)
                inputs = [memory.export(v.cpu()) if isinstance(v, torch.Tensor) else v
                          for v in generated]
                generated = named = None
                case = Case(definition, task, None, inputs, truth(inputs),
                            key=f"bench-{shape.label}")
            except Exception as exc:
                write({**base, "status": "GENERATION_ERROR",
                       "reason": f"{type(exc).__name__}: {exc}"})
                continue
            roof_s = c.time_s(ceilings)
            for solution in solutions:
                record = {**base, "solution": solution.name,
                          # which source was timed: the report ignores a line of an older one
                          "hashes": {"solution": solution_hash(solution)}, "flops": c.flops,
                          "bytes": c.bytes, "compute": c.compute, "derived": derived,
                          "roofline_ms": roof_s * 1e3,
                          "ceilings": {k: ceilings[k] for k in roofline.CEILING_KEYS
                                       if k in ceilings}}
                started = time.perf_counter()
                record.update(lane.judge(solution, case, truth))
                record["wall_s"] = round(time.perf_counter() - started, 2)  # judge and time
                # Rates from the device time, the figure the report ranks by (_recost).
                ms = device_ms(record.get("timing", {}))
                if ms and record["status"] == Status.PASSED.value:
                    record["fraction"] = roofline.fraction(roof_s, ms)
                    record["tflops"] = c.flops / (ms * 1e-3) / 1e12
                    record["tbps"] = c.bytes / (ms * 1e-3) / 1e12
                    record["copy_share"] = record["tbps"] * 1e12 / ceilings["bytes_per_s"]
                    floor_s = roofline.launch_floor_s(c, ceilings)
                    if floor_s is not None:
                        record["launch_share"] = floor_s / (ms * 1e-3)
                write(record)
            case = inputs = None  # free the shape's tensors before the next one
            torch.cuda.empty_cache()
    finally:
        lane.close()


def chosen_shapes(definition: Definition, labels: list[str] | None) -> list[BenchShape]:
    """The definition's benchmark shapes, or those of them labelled in ``labels``."""
    shapes = load_shapes(definition)
    return shapes if not labels else [s for s in shapes if s.label in labels]


def run(root: Path, out: Path, definitions: list[str] | None = None,
        solutions: str | None = None, ceilings_file: Path | None = None,
        samples: bool = False, shapes: list[str] | None = None) -> int:
    """``hf-eval bench run``: measure (or read) the ceilings, then every definition's shapes
    (default: every shape file; ``shapes``: only the shapes of these labels); one line per
    definition, shape and solution, printed as it is written. A definition that cannot run
    (no task, say) gets a DEFINITION_ERROR line and the others go on. Exit status 1 when
    a label in ``shapes`` names no shape of the chosen definitions (checked first), 2
    without a CUDA device."""
    dataset = open_dataset(root)
    names = definitions or sorted(shape_paths())
    if shapes:
        known = {s.label for name in names if name in dataset.definitions
                 for s in load_shapes(dataset.definition(name))}
        unknown = [label for label in shapes if label not in known]
        if unknown:
            print(f"error: --shapes: {', '.join(unknown)} is no shape label of "
                  f"{', '.join(names)} (hf_eval/families/<op_type>/<definition>.shapes.json)",
                  file=sys.stderr)
            return 1
    if not torch.cuda.is_available():
        print("error: the benchmark generates and times on a CUDA device; none is visible",
              file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if ceilings_file is not None:
        ceilings = json.loads(ceilings_file.read_text())
    else:
        ceilings = roofline.measure_ceilings()
        (out / "ceilings.json").write_text(json.dumps(ceilings, indent=2) + "\n")
    print(f"ceilings: bf16 {ceilings['bf16_flops'] / 1e12:.0f} TFLOP/s, fp8 "
          f"{ceilings['fp8_flops'] / 1e12:.0f} TFLOP/s, copy {ceilings['bytes_per_s'] / 1e12:.2f} "
          "TB/s", flush=True)
    audited = open(out / "results.jsonl", "a") if samples else None

    def sample(record: dict) -> None:
        audited.write(json.dumps(record) + "\n")
        audited.flush()
        print(f"{record['definition'][:44]:44} {'sample ' + record['workload'][:8]:28} "
              f"{record['solution'][:44]:44} {record['status']:14} "
              f"{(record.get('reason') or '')[:80]}", flush=True)

    with open(out / "bench.jsonl", "a") as sink:
        def write(record: dict) -> None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            ms, counted = device_ms(record.get("timing", {})), best_ms(record.get("timing", {}))
            print(f"{record['definition'][:44]:44} {record['shape']:28} "
                  f"{record.get('solution', '-')[:44]:44} {record['status']:14} "
                  f"{'' if ms is None else f'{ms:10.4f} ms (counted {counted:.4f})'} "
                  f"{record.get('fraction', float('nan')):.2f} {record.get('reason', '')[:60]}",
                  flush=True)

        for name in names:
            if name not in dataset.definitions:
                print(f"error: shape file for unknown definition {name}", file=sys.stderr)
                continue
            t0 = time.perf_counter()
            try:
                chosen = chosen_shapes(dataset.definition(name), shapes)
                if not chosen:
                    print(f"# {name}: none of the --shapes labels; skipped", flush=True)
                    continue
                bench_definition(dataset, name, ceilings, write, solutions,
                                 sample if samples else None, shapes=chosen)
            except Exception as exc:  # e.g. no task yet: reported, the other definitions go on
                write({"definition": name, "shape": "-", "status": "DEFINITION_ERROR",
                       "reason": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"})
            print(f"# {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return 0
