"""Compare solutions with the engine's saved outputs and time them: the published
benchmark's command line, done by ``hf_eval``'s replay and audit.

Two steps, each the harness's own:

1. ``replay`` (without writing the receipts): every selected workload's saved engine
   output (its receipt's ``expected_output``) is judged against the definition's
   reference under the task's tolerance. A workload without one (an imported workload)
   is counted and left out: it has nothing to compare with. Any failure stops here
   (exit 1; exit 2 when nothing has an engine output).
2. ``audit`` of the solutions on exactly the workloads whose engine output passed, judged
   against the same reference in the harness's confined worker, and timed.

A solution passes where it matches the reference that the engine's output matched, under
the task's tolerance both times. Exit status: 0 every case passed, 1 a failure, 2 bad
input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _harness

PROG = "benchmark_solutions.py"


def parser() -> argparse.ArgumentParser:
    p = _harness.harness_parser(PROG, __doc__, gpu_required=False)
    p.add_argument("--definition", action="append",
                   help="only this definition (repeatable; default: every one)")
    p.add_argument("--solution", action="append",
                   help="only this solution (repeatable; default: every solution of each "
                   "definition that runs on the device)")
    p.add_argument("--report", type=Path,
                   help="the audit's JSONL report (default: reports/audit-<time>.jsonl)")
    p.add_argument("--validation-only", action="store_true",
                   help="compare only; no timing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    root, device, problem = _harness.start(args)
    if problem:
        return _harness.error(problem)
    from hf_eval.capture.replay import replay
    from hf_eval.data.errors import DataError
    from hf_eval.judge.report import safe_text

    try:
        with _harness.gpu_locks(args.lock_directory, args.gpu):
            try:
                replayed = replay(root, definitions=args.definition, device=device,
                                  write=False, data_root=args.data_root)
            except DataError as err:
                return _harness.error(safe_text(err))
            for line in replayed.lines():
                print(safe_text(line))
            if replayed.exit_code:
                return replayed.exit_code
            definitions = sorted({r["definition"] for r in replayed.results})
            argv = ["--root", root, "audit", "--definitions", ",".join(definitions),
                    "--uuid", ",".join(r["uuid"] for r in replayed.results),
                    "--solutions", ",".join(args.solution) if args.solution else "all",
                    "--device", device]
            if args.report is not None:
                argv += ["--report", args.report]
            if args.data_root is not None:
                argv += ["--data-root", args.data_root.resolve()]
            if args.validation_only:
                argv.append("--validation-only")
            return _harness.run_harness(argv, PROG)
    except _harness.LockHeld as held:
        return _harness.error(str(held))


if __name__ == "__main__":
    sys.exit(main())
