"""Direct check of the FlashAttention-4 / FlashInfer solutions on the H200.

Not the audit runner and not evidence for a preference: each library solution is imported
from its JSON (``hf_eval.data.sources.load_entry``), run on its definition's FIRST sample
workload (tensors through ``open_dataset`` + ``materialise_inputs``, as the audit loads
them), and compared with the reference (``compile_reference``) under the task tolerance
(``compare_outputs``). One line per solution:

    PASS|FAIL|ERROR|TIMEOUT|SKIP <solution> first_call_s=... reference_s=... warm_ms=...
        max_abs_err=... <detail>

first_call_s is the first prepare+launch (or run) including JIT/CuTe-DSL compilation;
reference_s the reference's time on that workload (on the GPU);
warm_ms the median of 5 further launches (CUDA events; a rough figure, not the audit's
timing); max_abs_err the largest over the outputs. Each solution runs in a subprocess
(one crash or hang cannot stop the others; a CUDA fault cannot poison the next one) with
a deadline from the remaining budget, so the whole run ends within BUDGET_S.

usage (on the device, repository root, libraries on PYTHONPATH):
    python3 results/h200/tools/library_smoke.py BUDGET_S [SOLUTION,...]
Without names: every solution that depends on flash-attn-4 or flashinfer-python.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # hf_eval, from this checkout
LIBRARIES = ("flash-attn-4", "flashinfer-python")
PER_SOLUTION_CAP_S = 300.0  # FlashInfer's nvcc JIT of one MLA/prefill module can take minutes
MIN_START_S = 15.0  # below this much budget left, later solutions are reported SKIP


def library_solutions() -> list[str]:
    names = []
    for path in sorted((ROOT / "solutions").rglob("*.json")):
        spec = json.loads(path.read_text())
        if any(dep.split("==")[0].split("[")[0] in LIBRARIES
               for dep in spec["spec"]["dependencies"]):
            names.append(spec["name"])
    return names


def one(name: str) -> dict:
    """Run one solution on its definition's first workload (in this process)."""
    import torch

    from hf_eval.data.sources import compile_reference, load_entry
    from hf_eval.dataset import open_dataset
    from hf_eval.judge.acceptance import compare_outputs

    ds = open_dataset(ROOT)
    solution = ds.solution(name)
    definition = ds.definition(solution.definition)
    task = ds.task(solution.definition)
    row = ds.workloads[solution.definition][0]
    args = ds.materialise_inputs(definition, row, device="cuda")
    reference_start = time.perf_counter()
    expected = compile_reference(definition)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    torch.cuda.synchronize()
    reference_s = time.perf_counter() - reference_start
    entry = load_entry(solution)
    start = time.perf_counter()
    launch = entry.prepare(*args) if entry.prepare else (lambda: entry.run(*args))
    got = launch()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - start
    verdicts = compare_outputs(list(definition.outputs), got, expected, task.tolerance_for)
    times = []
    for _ in range(5):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        launch()
        end.record()
        torch.cuda.synchronize()
        times.append(begin.elapsed_time(end))
    return {"passed": all(v.passed for v in verdicts), "first_call_s": first_s,
            "reference_s": reference_s,
            "warm_ms": sorted(times)[2], "workload": row.value.workload.uuid,
            "max_abs_err": max(v.max_absolute_error for v in verdicts),
            "detail": "; ".join(f"{v.name}: {v.status} {v.reason}".strip() for v in verdicts)}


def child(name: str) -> None:
    try:
        result = one(name)
    except Exception as exc:  # reported by the parent, which goes on with the next one
        lines = traceback.format_exception(exc)
        result = {"error": "".join(lines[-4:]).strip()[-900:]}
    print("RESULT " + json.dumps(result), flush=True)


def main(budget_s: float, names: list[str]) -> int:
    deadline = time.monotonic() + budget_s
    failed = 0
    for name in names:
        left = deadline - time.monotonic()
        if left < MIN_START_S:
            print(f"SKIP {name} (budget spent)", flush=True)
            failed += 1
            continue
        timeout = min(PER_SOLUTION_CAP_S, left - 5.0)
        try:
            done = subprocess.run([sys.executable, __file__, "--one", name], cwd=ROOT,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            tail = (exc.stderr or b"")[-300:]
            tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
            print(f"TIMEOUT {name} after {timeout:.0f} s {tail.strip()!r}", flush=True)
            failed += 1
            continue
        line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            print(f"ERROR {name} rc={done.returncode} {done.stderr.strip()[-600:]!r}",
                  flush=True)
            failed += 1
            continue
        result = json.loads(line[len("RESULT "):])
        if "error" in result:
            print(f"ERROR {name} {result['error']!r}", flush=True)
            failed += 1
            continue
        status = "PASS" if result["passed"] else "FAIL"
        failed += status != "PASS"
        print(f"{status} {name} first_call_s={result['first_call_s']:.1f} "
              f"reference_s={result['reference_s']:.1f} warm_ms={result['warm_ms']:.4f} "
              f"max_abs_err={result['max_abs_err']:.3g} "
              f"workload={result['workload']} {result['detail'][:400]}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        child(sys.argv[2])
    elif len(sys.argv) in (2, 3):
        sys.exit(main(float(sys.argv[1]),
                      sys.argv[2].split(",") if len(sys.argv) == 3 else library_solutions()))
    else:
        sys.exit(__doc__)
