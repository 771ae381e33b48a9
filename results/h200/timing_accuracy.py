"""The audit's reported time against an independent timer, on the device.

For each target (definition, benchmark shape, solution), the same inputs are audited
``--audits`` times, each by a new audit lane (a new fork server, stand-in and candidate
worker), with the task's own timing (``iters`` calls per graph replay). In the same
process, the same call is timed by ``triton.testing.do_bench_cudagraph``: once on the
inputs as they are (warm L2, the published method's state) and once cycling over enough
copies of the inputs that none is L2-resident when it is read (cold L2). Printed: one JSON
line per audit and per target, then a table of the ratios and spreads.

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

from hf_eval.audit import Audit, AuditConfig, Case, Lane
from hf_eval.bench.run import _truth, runs_on_gpu
from hf_eval.bench.shapes import generate, load_shapes
from hf_eval.dataset import open_dataset
from hf_eval.isolation import memory
from hf_eval.sources import load_entry

#: (definition, benchmark shape, solution): a decode kernel of a few microseconds, two of
#: tens to hundreds, and a GEMM of about a millisecond.
TARGETS = [
    ("gdn_decode_qk4_v8_d128_k_last", "b1", "fla_recurrent_gdn_decode_qk4_v8_d128"),
    ("mixed_mla_decode_deepseek41_h64_d512_k8128_k4512", "b64",
     "triton_fused_dequant_mixed_mla_decode_h64"),
    ("qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4", "b64_ctx32k",
     "triton_split_kv_sparse_gqa_decode_h24_kv2"),
    ("dense_gemm_bf16_nt_n4096_k4096", "m16384", "torch_linear_bf16_n4096_k4096"),
]


def independent(solution, inputs: list[object]) -> dict:
    """do_bench_cudagraph of one call on these inputs (warm), and of a cycle over copies
    whose bytes are at least three times the L2 cache (cold), per call in ms."""
    from triton.testing import do_bench_cudagraph

    entry = load_entry(solution)
    here = [v.cuda() if isinstance(v, torch.Tensor) else v for v in inputs]
    warm = do_bench_cudagraph(lambda: entry.run(*here), rep=200, return_mode="median")
    nbytes = sum(v.numel() * v.element_size() for v in here if isinstance(v, torch.Tensor))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copies_n = max(2, min(256, math.ceil(3 * l2 / max(nbytes, 1))))
    copies = [[v.clone() if isinstance(v, torch.Tensor) else v for v in here]
              for _ in range(copies_n)]

    def cycle() -> None:
        for c in copies:
            entry.run(*c)

    cold = do_bench_cudagraph(cycle, rep=200, return_mode="median") / copies_n
    return {"warm_ms": warm, "cold_ms": cold, "cold_copies": copies_n, "input_bytes": nbytes}


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
        ref = independent(solution, inputs)
        row = {"definition": name, "shape": label, "solution": solution_name, **ref,
               "statuses": [a["status"] for a in audits]}
        for method, against in (("graph", "warm_ms"), ("cold", "cold_ms")):
            medians = [a["timing"][method]["median_ms"] for a in audits
                       if method in a.get("timing", {})]
            if not medians:
                continue
            row[method] = {
                "medians_ms": medians,
                "flagged": [a["timing"][method]["flagged"] for a in audits],
                "clock": audits[0]["timing"][method]["clock"],
                "iters": audits[0]["timing"][method]["iters"],
                "over_independent": [m / ref[against] for m in medians],
                "spread": max(medians) / min(medians)}
        rows.append(row)
        sink.write(json.dumps({"summary": row}) + "\n")
        sink.flush()
        print(json.dumps({"summary": row}), flush=True)
    print("\n| definition | shape | do_bench_cudagraph warm / cold ms | graph ms (x indep.) "
          "| cold ms (x indep.) | spread graph / cold | flagged |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        g, c = r.get("graph", {}), r.get("cold", {})

        def cell(m: dict) -> str:
            if not m:
                return "-"
            return (f"{statistics.median(m['medians_ms']):.4f} "
                    f"({min(m['over_independent']):.3f}-{max(m['over_independent']):.3f})")

        print(f"| {r['definition']} | {r['shape']} | {r['warm_ms']:.4f} / {r['cold_ms']:.4f} "
              f"| {cell(g)} | {cell(c)} | {g.get('spread', float('nan')):.3f} / "
              f"{c.get('spread', float('nan')):.3f} | {g.get('flagged')} {c.get('flagged')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
