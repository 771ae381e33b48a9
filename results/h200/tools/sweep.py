"""Tile-parameter sweep of shipped solutions at benchmark shapes (device only, timing only).

Why: Triton tile sizes that are right on an H200 can only be found there, and a device
run has minutes, not hours. A sweep file names a solution and variants of its source,
each a list of exact ``[old, new]`` text substitutions (an ``old`` that is not in the
source is an error, so a stale sweep never times the unchanged kernel by accident). Every
variant runs on the same generated inputs as ``hf-eval bench run`` (fixed seed, timing
only, not correctness evidence); its output is compared with the task's torch baseline
under the task tolerance, exactly as the benchmark does, and the verdict sits next to the
time. The winner is then packaged as a solution and goes through the audit runner.

usage: python results/h200/tools/sweep.py SWEEP.json --out DIR   (writes DIR/sweep.jsonl)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import torch

from hf_eval.bench.run import best_ms
from hf_eval.bench.shapes import generate, load_shapes
from hf_eval.data.schema import Solution
from hf_eval.data.sources import load_entry
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.judge.acceptance import compare_outputs

ROOT = Path(__file__).resolve().parents[3]


def _timed(*_args, **_kwargs):
    """Retired with the confined timing path: this tool timed candidates in its own process,
    which the audit no longer trusts (docs/verdicts.md). It is kept as the provenance of
    results/h200/2026-11-29-tile-sweeps/sweep-*.jsonl."""
    raise SystemExit("results/h200/tools/sweep.py is retired: in-process timing "
                     "(docs/verdicts.md); `hf-eval bench run` times through the confined worker")


def variant_solution(solution: Solution, label: str, subs: list[list[str]]) -> Solution:
    """``solution`` with its sources edited by ``subs``; each ``old`` must occur."""
    data = solution.model_dump(mode="json")
    data["name"] = f"{solution.name}@{label}"
    for old, new in subs:
        hits = [s for s in data["sources"] if old in s["content"]]
        if not hits:
            raise ValueError(f"variant {label!r}: {old!r} is not in {solution.name}'s sources")
        for source in hits:
            source["content"] = source["content"].replace(old, new)
    return Solution.model_validate(data)


def outputs(entry, inputs: list) -> tuple:
    with torch.no_grad():
        fn = entry.prepare(*inputs) if entry.prepare is not None else (lambda: entry.run(*inputs))
        got = fn()
    return fn, got if isinstance(got, tuple) else (got,)


def sweep(dataset: Dataset, spec: dict, write) -> None:
    name = spec["definition"]
    definition, task = dataset.definition(name), dataset.task(name)
    base = next(s for s in dataset.solutions_for(name) if s.name == spec["solution"])
    baseline = next(s for s in dataset.solutions_for(name) if s.name == task.baseline.solution)
    wanted = spec.get("shapes")
    for shape in load_shapes(definition):
        if wanted and shape.label not in wanted:
            continue
        inputs = generate(definition, shape)
        _, reference = outputs(load_entry(baseline), inputs)
        reference = tuple(t.clone() for t in reference)
        for variant in [{"label": "shipped", "subs": []}, *spec["variants"]]:
            record = {"definition": name, "shape": shape.label, "solution": base.name,
                      "variant": variant["label"], "subs": variant["subs"]}
            try:
                entry = load_entry(variant_solution(base, variant["label"], variant["subs"]))
                fn, got = outputs(entry, inputs)
                verdicts = compare_outputs(list(definition.outputs), got, reference,
                                           task.tolerance_for)
                bad = [v for v in verdicts if not v.passed]
                record["check"] = ("agrees with baseline" if not bad else
                                   f"DISAGREES: {bad[0].name}: {bad[0].reason}")
                del got
                record["timing"] = _timed(fn, torch.device("cuda"))
                record["ms"] = best_ms(record["timing"])
                record["status"] = "TIMED"
            except Exception as exc:
                record.update(status="ERROR", reason=f"{type(exc).__name__}: {exc}"[:400],
                              traceback=traceback.format_exc(limit=-2)[-800:])
                torch.cuda.synchronize()
            write(record)
            torch.cuda.empty_cache()
        inputs = reference = None
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("spec", type=Path, help="JSON list of {definition, solution, shapes?, variants}")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    dataset = open_dataset(ROOT)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "sweep.jsonl", "a") as sink:
        def write(record: dict) -> None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            ms = record.get("ms")
            print(f"{record['definition'][:36]:36} {record['shape']:24} {record['variant']:18} "
                  f"{record['status']:6} {'' if ms is None else f'{ms:9.4f} ms'} "
                  f"{record.get('check', record.get('reason', ''))[:70]}", flush=True)

        for spec in json.loads(args.spec.read_text()):
            t0 = time.perf_counter()
            sweep(dataset, spec, write)
            print(f"# {spec['solution']}: {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
