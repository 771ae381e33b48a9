"""The audit's reported time against an independent timer, on the device.

For each target (definition, benchmark shape, solution), the same inputs are audited
``--audits`` times, each by a new audit lane (a new fork server, stand-in and candidate
worker), with the task's own timing (``iters`` calls per graph replay). In the same
process, the same call is timed by ``triton.testing.do_bench_cudagraph``: once on the
inputs as they are (warm L2, the published method's state), cycling over as many copies as the
audit's graph has calls (its like), and cycling over enough copies that none is
L2-resident when it is read (cold L2); and by ``triton.testing.do_bench``. Printed: one
JSON line per audit and per target, then a table of the ratios and spreads.

    python results/h200/timing_accuracy.py OUT_DIR [--audits 3] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

from hf_eval.bench.run import _truth, runs_on_gpu
from hf_eval.bench.shapes import generate, load_shapes
from hf_eval.data import memory
from hf_eval.data.sources import load_entry
from hf_eval.dataset import open_dataset
from hf_eval.judge.audit import Audit, AuditConfig, Case, Lane

#: (definition, benchmark shape, solution): a decode kernel of a few microseconds, two of
#: tens to hundreds, and a GEMM of about a millisecond.
TARGETS = [
    ("gdn_decode_qk4_v8_d128_k_last", "b1", "fla_recurrent_gdn_decode_qk4_v8_d128"),
    ("dense_gemm_bf16_nt_n4096_k4096", "m16384", "torch_linear_bf16_n4096_k4096"),
    ("mixed_mla_decode_deepseek41_h64_d512_k8128_k4512", "b64",
     "triton_fused_dequant_mixed_mla_decode_h64"),
    ("qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4", "b64_ctx32k",
     "triton_split_kv_sparse_gqa_decode_h24_kv2"),
]


def independent(solution, inputs: list[object], iters: int) -> dict:
    """Independent figures of the same call, per call in ms, by
    ``triton.testing.do_bench_cudagraph``: on one input set (``warm_ms``, the published
    method's state), cycling over ``iters`` copies (``rotating_ms``: what the audit's
    ``graph`` replays, each call on its own set, without an eviction), and cycling over
    copies of at least three times the L2 cache (``cold_ms``: no input L2-resident); and
    by ``triton.testing.do_bench`` (``do_bench_ms``: one eager call after zeroing a
    buffer larger than the L2 cache, launch hidden behind it); and a graph of ``iters``
    calls replayed after 20 ms idle, behind a sleep as the audit's (``burst_ms``: the
    clocks of a short burst, not of a sustained loop)."""
    from triton.testing import do_bench, do_bench_cudagraph

    entry = load_entry(solution)

    def launch(args: list[object]):
        """One call as the audit makes it: the prepared launch where there is one."""
        if entry.prepare is not None:
            return entry.prepare(*args)
        return lambda: entry.run(*args)

    here = [v.cuda() if isinstance(v, torch.Tensor) else v for v in inputs]
    call = launch(here)
    nbytes = sum(v.numel() * v.element_size() for v in here if isinstance(v, torch.Tensor))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    out = {"input_bytes": nbytes}
    out["warm_ms"] = do_bench_cudagraph(call, rep=200, return_mode="median")
    out["do_bench_ms"] = do_bench(call, rep=200, return_mode="median")
    # In bursts, as the audit replays: a graph of ``iters`` calls after 20 ms idle.
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(max(1, iters)):
            call()
    bursts = []
    for _ in range(10):
        torch.cuda.synchronize()
        time.sleep(0.02)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(50_000)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        bursts.append(start.elapsed_time(end) / max(1, iters))
    out["burst_ms"] = statistics.median(bursts)
    del graph
    for key, n in (("rotating_ms", max(1, iters)),
                   ("cold_ms", max(2, min(256, math.ceil(3 * l2 / max(nbytes, 1)))))):
        if n == 1:
            out[key] = out["warm_ms"]
            continue
        copies = [[v.clone() if isinstance(v, torch.Tensor) else v for v in here]
                  for _ in range(n)]
        calls = [launch(c) for c in copies]
        # do_bench_cudagraph runs on a stream of its own: the copies must be complete
        # first (a page table still being copied sends a gather out of bounds)
        torch.cuda.synchronize()

        def cycle(calls=calls) -> None:
            for c in calls:
                c()

        out[key] = do_bench_cudagraph(cycle, rep=200, return_mode="median") / n
        out[key.replace("_ms", "_copies")] = n
        del copies, calls
        torch.cuda.empty_cache()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--audits", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    dataset = open_dataset(Path.cwd())
    device = torch.device("cuda")
    rows = []
    sink = open(args.out / "accuracy.jsonl", "a")
    for name, label, solution_name in TARGETS:
        if args.only and name not in args.only and solution_name not in args.only:
            continue
        definition, task = dataset.definition(name), dataset.task(name)
        solution = dataset.solution(solution_name)
        shape = next(s for s in load_shapes(definition) if s.label == label)
        baseline = next((s for s in dataset.solutions_for(name)
                         if s.name == task.baseline.solution and runs_on_gpu(s)), None)
        truth = _truth(dataset, definition, baseline, device)
        generated = generate(definition, shape, "cuda")
        inputs = [memory.export(v.cpu()) if isinstance(v, torch.Tensor) else v
                  for v in generated]
        del generated
        case = Case(definition, task, None, inputs, truth(inputs), key=f"acc-{label}")
        audits = []
        for k in range(args.audits):
            audit = Audit(dataset, AuditConfig(report=Path("/dev/null"), devices=["cuda"],
                                               reference_cache=False))
            lane = Lane(audit, device)
            t0 = time.perf_counter()
            try:
                record = lane.judge(solution, case, truth)
            finally:
                lane.close()
            record = {"definition": name, "shape": label, "solution": solution_name,
                      "audit": k + 1, "wall_s": round(time.perf_counter() - t0, 3), **record}
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            audits.append(record)
            print(json.dumps({key: record.get(key) for key in
                              ("definition", "shape", "audit", "status", "wall_s",
                               "setup_ms")}), flush=True)
        iters = next((a["timing"]["graph"]["iters"] for a in audits
                      if "graph" in a.get("timing", {})), 1)
        ref = independent(solution, inputs, iters)
        row = {"definition": name, "shape": label, "solution": solution_name, **ref,
               "statuses": [a["status"] for a in audits]}
        for method, against in (("graph", "rotating_ms"), ("cold", "cold_ms")):
            medians = [a["timing"][method]["median_ms"] for a in audits
                       if method in a.get("timing", {})]
            if not medians:
                continue
            row[method] = {
                "medians_ms": medians,
                "flagged": [a["timing"][method]["flagged"] for a in audits],
                "clock": audits[0]["timing"][method]["clock"],
                "iters": audits[0]["timing"][method]["iters"],
                "device_medians_ms": [a["timing"][method]["device_median_ms"]
                                      for a in audits if method in a.get("timing", {})],
                "over_independent": [m / ref[against] for m in medians],
                "spread": max(medians) / min(medians)}
            row[method]["device_spread"] = (max(row[method]["device_medians_ms"])
                                            / min(row[method]["device_medians_ms"]))
        rows.append(row)
        sink.write(json.dumps({"summary": row}) + "\n")
        sink.flush()
        print(json.dumps({"summary": row}), flush=True)
    print("\n| definition | shape | independent warm / rotating / cold / do_bench / burst ms "
          "| graph ms (x rotating) | cold ms (x cold) | spread graph / cold | flagged |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        g, c = r.get("graph", {}), r.get("cold", {})

        def cell(m: dict) -> str:
            if not m:
                return "-"
            return (f"{statistics.median(m['medians_ms']):.4f} "
                    f"({min(m['over_independent']):.3f}-{max(m['over_independent']):.3f})")

        print(f"| {r['definition']} | {r['shape']} | {r['warm_ms']:.4f} / "
              f"{r['rotating_ms']:.4f} / {r['cold_ms']:.4f} / {r['do_bench_ms']:.4f} / "
              f"{r['burst_ms']:.4f} "
              f"| {cell(g)} | {cell(c)} | {g.get('spread', float('nan')):.3f} / "
              f"{c.get('spread', float('nan')):.3f} | {g.get('flagged')} {c.get('flagged')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
