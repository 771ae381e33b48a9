"""Direct check of the engine baselines on the H200: PASS/FAIL/ERROR per solution.

Not the audit runner and not timing: every solution that
docs/interface-audit/sglang-0.5.23.json names as an ``engine_baseline.solution`` is run
directly on its definition's sample cases (the first one by default) on CUDA and compared with the
reference under the task tolerance, so a library that does not import, a kernel that does
not build for sm_90 or an adapter that is wrong shows up in one device call before the
audit proper. Each solution runs in its own subprocess with a time limit (JIT compilation
of FlashInfer, FA4 and Triton kernels happens on the first call), so one hang or crash
costs only its own line.

usage (on the device, repository root, staged packages on PYTHONPATH):
    python3 results/h200/tools/engine_smoke.py [--cases first|all] [--only NAME[,NAME...]]
                                            [--timeout SECONDS] [--budget SECONDS]
                                            [--device cuda|cpu]
Prints the import status of the kernel libraries, then one line per solution and case:
``PASS``, ``FAIL`` (with the outputs outside tolerance), ``ERROR`` (the exception) or
``TIMEOUT``, and a summary. Expected where known (docs/interface-audit): the GDN baselines
fail the state of their large-state sample (SGLang rounds beta to BF16); everything else
passes. Exit status 0 unless the tool itself breaks.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LIBRARIES = ("triton", "flashinfer", "flash_attn.cute", "flash_mla", "tilelang")


def baselines(only: set[str] | None) -> list[tuple[str, str]]:
    """(definition, solution) for every engine baseline the reading of the pinned SGLang
    wheel names, those through a kernel library first (the plain-torch ones were audited
    on the H200 before)."""
    audit = json.loads((ROOT / "docs/interface-audit/sglang-0.5.23.json").read_text())
    entries = sorted((e for e in audit["entries"] if e["engine_baseline"].get("solution")),
                     key=lambda e: e["engine_baseline"]["through"] == ["torch"])
    pairs = [(e["definition"], e["engine_baseline"]["solution"]) for e in entries]
    return [p for p in pairs if only is None or p[1] in only]


def child(definition: str, solution: str, cases: str, device: str) -> None:
    """Run one solution on its sample cases; print one JSON line per case."""
    sys.path.insert(0, str(ROOT))
    import torch

    from hf_eval.data.sources import compile_reference, load_entry
    from hf_eval.dataset import open_dataset
    from hf_eval.judge.acceptance import compare_outputs
    from hf_eval.samples.cases import generate_case, load_cases

    ds = open_dataset(ROOT, resolvers=[])
    d, task = ds.definition(definition), ds.task(definition)
    reference = compile_reference(d)
    spec = load_cases(definition)
    selected = spec.cases[:1] if cases == "first" else spec.cases
    entry = load_entry(ds.solution(solution))
    for case in selected:
        start = time.monotonic()
        values = generate_case(d, case)
        args = [v.to(device) if isinstance(v, torch.Tensor) else v
                for v in (values[n] for n in d.inputs)]
        try:
            expected = reference(*args)
            got = entry.run(*args)
            if device == "cuda":
                torch.cuda.synchronize()
            expected = expected if isinstance(expected, tuple) else (expected,)
            verdicts = compare_outputs(list(d.outputs), got, expected, task.tolerance_for)
            failed = [f"{v.name}: {v.reason}" for v in verdicts if not v.passed]
            line = {"status": "FAIL" if failed else "PASS", "detail": "; ".join(failed)}
        except Exception as exc:  # reported, not raised: the next case still runs
            line = {"status": "ERROR", "detail": repr(exc)[:400]}
        line.update(case=case.label, seconds=round(time.monotonic() - start, 2))
        print(json.dumps(line), flush=True)


def library_status() -> list[str]:
    lines = []
    for name in LIBRARIES:
        try:
            module = importlib.import_module(name)
            lines.append(f"{name}: {getattr(module, '__version__', 'imported')}")
        except Exception as exc:
            lines.append(f"{name}: not importable ({type(exc).__name__}: {str(exc)[:120]})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", choices=("first", "all"), default="first")
    parser.add_argument("--device", default="cuda",
                        help="cuda (the point); cpu only to try the tool on torch baselines")
    parser.add_argument("--only", help="comma-separated solution names")
    parser.add_argument("--timeout", type=float, default=240.0,
                        help="seconds per solution (all its cases), JIT builds included")
    parser.add_argument("--budget", type=float, default=540.0,
                        help="seconds for the whole run; solutions not started are skipped")
    parser.add_argument("--child", nargs=2, metavar=("DEFINITION", "SOLUTION"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.cases, args.device)
        return 0

    print("\n".join(library_status()), flush=True)
    only = set(args.only.split(",")) if args.only else None
    counts: dict[str, int] = {}
    start = time.monotonic()
    for definition, solution in baselines(only):
        left = args.budget - (time.monotonic() - start)
        if left < 10:
            print(f"SKIPPED {solution}: budget spent", flush=True)
            counts["SKIPPED"] = counts.get("SKIPPED", 0) + 1
            continue
        command = [sys.executable, __file__, "--cases", args.cases, "--device", args.device,
                   "--child", definition, solution]
        try:
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                                  timeout=min(args.timeout, left))
        except subprocess.TimeoutExpired:
            print(f"TIMEOUT {solution} after {min(args.timeout, left):.0f} s", flush=True)
            counts["TIMEOUT"] = counts.get("TIMEOUT", 0) + 1
            continue
        lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
        if not lines:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            print(f"ERROR {solution}: exit {done.returncode}: {' | '.join(tail)[:400]}",
                  flush=True)
            counts["ERROR"] = counts.get("ERROR", 0) + 1
            continue
        for line in lines:
            counts[line["status"]] = counts.get(line["status"], 0) + 1
            print(f"{line['status']} {solution} {line['case']} {line['seconds']} s"
                  + (f" {line['detail']}" if line["detail"] else ""), flush=True)
    print("summary: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f" ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
