"""The H200 records: audit reports + benchmark timings + ceilings -> docs/h200.

Why a separate module: ``summarize`` (hf_eval/summary.py) turns audit reports into coverage
and paired speed-ups; the H200 report adds what only a device run has (the measured
ceilings, the roofline fraction of every timing, the benchmark shapes) and chooses a
preferred solution per definition from that evidence. Nothing is measured here: it reads
the device run's files (copied into docs/h200) and the repository.

Inputs (``--dir``, default docs/h200): results.jsonl (audit lines), bench.jsonl (benchmark
lines, inputs generated on the device for timing only), ceilings*.json (one per device
call), env*.txt, commands.txt (the exact commands), notes.md (hand-written commentary,
appended to performance.md). Outputs: summary.json, performance.md,
preferred-solutions.json.

    python -m hf_eval.h200_report [--dir docs/h200]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from hf_eval import roofline
from hf_eval.modules import solution_hash
from hf_eval.report import geomean, read_report
from hf_eval.repository import Dataset
from hf_eval.summary import summarize_records

ROOT = Path(__file__).resolve().parent.parent
#: Definitions where PyTorch has no fused kernel (the issue's 3x geometric-mean goal).
UNFUSED_FAMILIES = ("grouped_gemm", "mixed_mla", "sparse_mla", "moe_router", "qsa_index",
                    "qsa_attention", "gdn", "neighborhood_attention")
#: Relative difference under which two timings count as a tie (METHOD.md: time twice).
TIE = 0.03
MEMORY_BOUND_GOAL = {"gdn_decode_qk4_v8_d128_k_last": "batch_size",
                     "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512": "B",
                     "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4": "B",
                     "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4": "B"}
GENERATED_NOTE = ("Benchmark-shape inputs were generated on the device by hf_eval.benchmark "
                  "(fixed seed) for timing only: they are not committed and are not correctness "
                  "evidence; the only check on them is each output against the torch "
                  "baseline's under the task tolerance (column 'check').")


def _best_ms(timing: dict) -> float | None:
    for method in ("graph", "prepared", "eager"):
        if "median_ms" in timing.get(method, {}):
            return timing[method]["median_ms"]
    return None


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, spec)


def load_bench(path: Path) -> dict[tuple[str, str, str], dict]:
    """(definition, shape, solution) -> the last benchmark line (a rerun supersedes)."""
    latest: dict[tuple[str, str, str], dict] = {}
    if path.is_file():
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
        if base is None or base["status"] != "PASSED":
            continue
        a, b = _best_ms(base.get("timing", {})), _best_ms(recs[w].get("timing", {}))
        if a and b:
            ratios.append(a / b)
    return {"against": other, "geomean": geomean(ratios), "min": min(ratios),
            "max": max(ratios), "paired": len(ratios)} if ratios else None


def audit_table(dataset: Dataset, records: list[dict], ceilings: dict) -> dict:
    """Per definition and solution: coverage, median time, roofline fraction, speed-ups."""
    latest: dict[tuple[str, str, str], dict] = {}
    for rec in records:
        latest[(rec["definition"], rec["solution"], rec["workload"])] = rec
    rows_by_uuid = {r.value.workload.uuid: r for rows in dataset.workloads.values() for r in rows}
    entries = roofline.load()
    costs: dict[str, roofline.Cost] = {}
    out: dict = defaultdict(dict)
    grouped: dict = defaultdict(lambda: defaultdict(dict))
    for (definition, solution, workload), rec in latest.items():
        grouped[definition][solution][workload] = rec
    for definition, sols in sorted(grouped.items()):
        task = dataset.task(definition)
        total = len(dataset.workloads.get(definition, []))
        for solution, recs in sorted(sols.items()):
            current = dataset.solutions.get(solution)
            stale = [w for w, r in recs.items() if current is None
                     or r.get("hashes", {}).get("solution") != solution_hash(current.value)]
            passed = [w for w, r in recs.items() if r["status"] == "PASSED" and w not in stale]
            times, fractions = [], []
            for w in passed:
                ms = _best_ms(recs[w].get("timing", {}))
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
                "stale_records": len(stale),
                "statuses": sorted({r["status"] for r in recs.values()}),
                "median_ms_geomean": geomean(times) if times else None,
                "roofline_fraction_geomean": geomean(fractions) if fractions else None,
                "speedup_vs_baseline": paired(task.baseline.solution),
                "speedup_vs_engine_baseline": paired(task.engine_baseline),
                "failures": sorted({r.get("reason", "")[:160] for r in recs.values()
                                    if r["status"] != "PASSED"})[:3]}
    return out


def _recost(dataset: Dataset, rec: dict, shapes: dict, first_ceilings: dict) -> None:
    """Recompute a benchmark line's roofline with the current formulas (in place).

    Lines written before the benchmark stored its counts and ceilings get the counts from
    the shape file (the generators fix them exactly) and the first device call's ceilings.
    """
    from hf_eval import benchmark

    definition = dataset.definition(rec["definition"])
    shape = shapes.get((rec["definition"], rec["shape"]))
    counts = rec.get("derived")
    if counts is None:
        counts = benchmark.structure_counts(definition, shape) if shape else None
    c = roofline.cost(definition, rec["axes"], counts=counts)
    ceilings = rec.get("ceilings") or first_ceilings
    ms = _best_ms(rec.get("timing", {}))
    rec.update(flops=c.flops, bytes=c.bytes, compute=c.compute,
               roofline_ms=c.time_s(ceilings) * 1e3)
    if ms:
        rec.update(fraction=roofline.fraction(c.time_s(ceilings), ms),
                   tflops=c.flops / (ms * 1e-3) / 1e12, tbps=c.bytes / (ms * 1e-3) / 1e12,
                   copy_share=c.bytes / (ms * 1e-3) / ceilings["bytes_per_s"])


def bench_table(dataset: Dataset, bench: dict, first_ceilings: dict) -> dict:
    """Per definition, shape and solution: time, rates, fraction, speed-ups, check."""
    from hf_eval import benchmark

    shapes = {}
    for name in dataset.definitions:
        path = benchmark.BENCHMARKS_DIR / f"{name}.json"
        if path.is_file():
            for shape in benchmark.load_shapes(dataset.definition(name)):
                shapes[(name, shape["label"])] = shape
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
                ms = _best_ms(rec.get("timing", {}))
                entry = {"status": rec["status"], "ms": ms, "fraction": rec.get("fraction"),
                         "tflops": rec.get("tflops"), "tbps": rec.get("tbps"),
                         "copy_share": rec.get("copy_share"),
                         "ceilings": rec.get("ceilings") or first_ceilings,
                         "check": rec.get("check", rec.get("reason", "")),
                         "axes": rec.get("axes"), "roofline_ms": rec.get("roofline_ms")}
                for key, other in (("x_baseline", task and task.baseline.solution),
                                   ("x_engine", task and task.engine_baseline)):
                    base = sols.get(other) if other else None
                    base_ms = _best_ms(base.get("timing", {})) if base else None
                    entry[key] = base_ms / ms if base_ms and ms and other != solution else None
                row[solution] = entry
            table[definition][shape] = row
    return table


def _usable(entry: dict) -> bool:
    return entry["status"] == "TIMED" and entry["ms"] is not None and \
        not str(entry["check"]).startswith("DISAGREES")


def choose_preferred(dataset: Dataset, audit: dict, bench: dict) -> dict:
    """Per definition: among solutions that passed every sample workload on the H200 (current
    source), the fastest by geometric mean over the benchmark shapes (sample timings when a
    definition has no benchmark timing for it)."""
    chosen = {}
    for definition in sorted(dataset.definitions):
        sols = audit.get(definition, {})
        eligible = [s for s, r in sols.items() if r["workloads"] and r["passed"] ==
                    r["workloads"] and r["audited"] >= r["workloads"]]
        if not eligible:
            chosen[definition] = {"solution": None, "evidence": "no solution has passed every "
                                  "sample workload on the H200 with its current source"}
            continue
        shapes = bench.get(definition, {})
        scores = {}
        for s in eligible:
            times = [row[s]["ms"] for row in shapes.values() if s in row and _usable(row[s])]
            if shapes and len(times) == len(shapes):
                scores[s] = ("benchmark", geomean(times), len(times))
        if not scores:
            scores = {s: ("sample", sols[s]["median_ms_geomean"], sols[s]["passed"])
                      for s in eligible if sols[s]["median_ms_geomean"]}
        best = min(scores, key=lambda s: scores[s][1])
        basis, value, n = scores[best]
        runner_up = sorted(v for s, (_, v, _) in scores.items() if s != best)
        tie = (f" The runner-up is within {TIE:.0%}: a tie within run-to-run spread, not a "
               "measured advantage." if runner_up and runner_up[0] <= value * (1 + TIE) else "")
        others = "; ".join(f"{s} {v:.4g} ms" for s, (_, v, _) in sorted(scores.items(),
                                                                         key=lambda x: x[1][1]))
        chosen[definition] = {
            "solution": best,
            "evidence": f"passed {sols[best]['passed']}/{sols[best]['workloads']} sample "
                        f"workloads on the H200 (audit runner, unchanged tolerances); fastest "
                        f"geometric-mean time over {n} {basis} "
                        f"{'shapes (inputs generated on the device, timing only)' if basis == 'benchmark' else 'workloads'}"  # noqa: E501
                        f": {others}.{tie}"}
    return chosen


def _eligible(audit: dict, definition: str, solution: str) -> bool:
    r = audit.get(definition, {}).get(solution)
    return bool(r and r["workloads"] and r["passed"] == r["workloads"])


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


def goals(dataset: Dataset, bench: dict, audit: dict, preferred: dict) -> list[dict]:
    """The issue's goals. "met" judges the preferred solution (audited on the H200); the best
    figure of any shipped solution is shown beside it with its audit status."""
    result = []
    for definition, shapes in bench.items():
        if definition not in dataset.definitions:
            continue
        op = dataset.definition(definition).op_type
        pick = preferred.get(definition, {}).get("solution")
        for shape, row in shapes.items():
            usable = {s: e for s, e in row.items() if _usable(e) and s in dataset.solutions}
            if not usable:
                continue
            axes = next(iter(usable.values()))["axes"] or {}
            if op == "gemm" and axes.get("M", 0) >= 4096:
                figures = {s: e["tflops"] * 1e12 / e["ceilings"]["bf16_flops"]
                           for s, e in usable.items()}
                result.append(_goal("dense GEMM >= 90% of the measured cuBLAS ceiling",
                                    definition, shape, figures, 0.9, audit, pick))
            if op in ("dense_attention", "block_causal_attention") and \
                    max(axes.get("Nq", 0), axes.get("Nk", 0)) >= 4096:
                cudnn = [e for s, e in usable.items() if s.startswith("cudnn")]
                reference = cudnn[0]["ms"] if cudnn else None
                if reference:
                    figures = {s: reference / e["ms"] for s, e in usable.items()}
                    result.append(_goal("attention >= cuDNN SDPA throughput (ratio)", definition,
                                        shape, figures, 0.98, audit, pick))
            if definition in MEMORY_BOUND_GOAL:
                figures = {s: e["copy_share"] for s, e in usable.items() if e["copy_share"]}
                result.append(_goal("memory-bound >= 60% of measured copy bandwidth",
                                    definition, shape, figures, 0.6, audit, pick))
    for definition in sorted(dataset.definitions):
        if dataset.definition(definition).op_type not in UNFUSED_FAMILIES:
            continue
        pick = preferred.get(definition, {}).get("solution")
        baseline = dataset.task(definition).baseline.solution
        shapes = bench.get(definition, {})
        figures = {}
        for solution in {s for row in shapes.values() for s in row}:
            if solution not in dataset.solutions:
                continue
            ratios = [1.0 if solution == baseline else row[solution]["x_baseline"]
                      for row in shapes.values() if solution in row and _usable(row[solution])]
            if ratios and len(ratios) == len(shapes) and all(ratios):
                figures[solution] = geomean(ratios)
        result.append(_goal("geomean speed-up >= 3x over the plain PyTorch solution",
                            definition, f"{len(shapes)} benchmark shapes", figures, 3.0, audit,
                            pick))
    return result


def performance_markdown(dataset: Dataset, audit: dict, bench: dict, ceilings: list[dict],
                         preferred: dict, goal_rows: list[dict], commands: str,
                         env: str) -> str:
    c = ceilings[-1]
    lines = ["# H200 performance", "",
             "Generated by `python -m hf_eval.h200_report` from the device runs' files in this "
             "folder. Every number was measured on one NVIDIA H200 through the workplace's "
             "device tool; nothing here is a datasheet figure.", "",
             f"**Ceilings (measured in the same device call as the timings):** bf16 matmul "
             f"{c['bf16_flops'] / 1e12:.0f} TFLOP/s, FP8 matmul {c['fp8_flops'] / 1e12:.0f} "
             f"TFLOP/s, copy {c['bytes_per_s'] / 1e12:.2f} TB/s ({c['method']}) in the last call. "
             "Each call's own ceilings are in ceilings*.json; each benchmark timing's fraction "
             "uses its own call's; sample-workload fractions use the last call's.",
             "", "**Roofline:** time = max(FLOPs / ceiling, compulsory bytes / copy bandwidth) "
             "from hf_eval/roofline.json (memory-bound entries: bytes only); fraction = roofline "
             "time / measured median (CUDA-graph replay where capture worked, else the "
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
            lines += ["", "Benchmark shapes (generated on the device, timing only):", "",
                      "| shape | solution | ms | TFLOP/s | TB/s | roofline fraction | "
                      "× torch baseline | × engine baseline | check |",
                      "|---|---|---|---|---|---|---|---|---|"]
            for shape, row in shapes.items():
                for solution, e in row.items():
                    shipped = "" if solution in dataset.solutions else " (not shipped: rejected/)"
                    lines.append(
                        f"| {shape} | {solution}{shipped} | {_fmt(e['ms'], '.4f')} | "
                        f"{_fmt(e['tflops'], '.1f')} | {_fmt(e['tbps'], '.2f')} | "
                        f"{_fmt(e['fraction'], '.3f')} | {_fmt(e['x_baseline'], '.2f')} | "
                        f"{_fmt(e['x_engine'], '.2f')} | "
                        f"{e['status'] if e['status'] != 'TIMED' else ''} "
                        f"{str(e['check'])[:90]} |")
    return "\n".join(lines) + "\n"


def build(folder: Path, root: Path = ROOT) -> list[Path]:
    dataset = Dataset.load(root)
    records = read_report(folder / "results.jsonl")
    ceilings = [json.loads(p.read_text()) for p in sorted(folder.glob("ceilings*.json"))]
    if not ceilings:
        raise SystemExit(f"error: {folder}: no ceilings*.json (measure on the device first)")
    bench = bench_table(dataset, load_bench(folder / "bench.jsonl"), ceilings[0])
    audit = audit_table(dataset, records, ceilings[-1])
    preferred = choose_preferred(dataset, audit, bench)
    goal_rows = goals(dataset, bench, audit, preferred)
    commands = (folder / "commands.txt").read_text() if (folder / "commands.txt").is_file() \
        else ""
    env = "\n".join(p.read_text() for p in sorted(folder.glob("env*.txt")))
    summary = {"note": GENERATED_NOTE, "ceilings": ceilings, "commands": commands,
               "audit": summarize_records(records), "audit_roofline": audit,
               "benchmark": bench, "goals": goal_rows}
    written = [folder / "summary.json", folder / "performance.md",
               folder / "preferred-solutions.json"]
    written[0].write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    notes = (folder / "notes.md").read_text() if (folder / "notes.md").is_file() else ""
    written[1].write_text(performance_markdown(dataset, audit, bench, ceilings, preferred,
                                               goal_rows, commands, env)
                          + ("\n" + notes if notes else ""))
    written[2].write_text(json.dumps({"hardware": "NVIDIA H200", "commands": commands,
                                      "preferred": preferred}, indent=2) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hf_eval.h200_report", description=__doc__)
    p.add_argument("--dir", type=Path, default=ROOT / "docs" / "h200")
    args = p.parse_args(argv)
    for path in build(args.dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
