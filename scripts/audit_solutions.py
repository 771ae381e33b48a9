"""Audit solutions against their tasks' references: the published audit's command line,
judged by ``hf-eval audit``.

Every case runs in the harness's confined worker and is judged under the task's
tolerance; one JSON line per case goes to --report (the harness's record, not the
published script's). Exit status: 0 every case passed, 1 a solution failed a case,
2 bad input (a bad flag, a busy GPU lock, a selection that matches nothing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _harness

PROG = "audit_solutions.py"


def parser() -> argparse.ArgumentParser:
    p = _harness.harness_parser(PROG, __doc__, gpu_required=True)
    p.add_argument("--definition", action="append",
                   help="audit only this definition (repeatable; default: every one)")
    p.add_argument("--suite", choices=["first", "dev", "all"], default="first",
                   help="first: the first workload of each definition (the default); dev: "
                   "each task's dev workloads; all: every workload")
    p.add_argument("--workload", action="append", metavar="UUID",
                   help="audit only this workload of the suite (repeatable; a UUID outside "
                   "the suite selects nothing: use --suite all)")
    p.add_argument("--solution", action="append",
                   help="audit only this solution (repeatable; default: every solution of "
                   "each definition that runs on the device)")
    p.add_argument("--candidate", action="append", type=Path, default=[], metavar="PATH",
                   help="also audit this module's run() (a .py file, packaged with the .py "
                   "files beside it) on the one selected --definition (repeatable); it is "
                   "audited whatever --solution says")
    p.add_argument("--only-default", action="store_true",
                   help="leave out the engine's baseline: the solution named "
                   "sglang_<definition> and the task's engine_baseline")
    p.add_argument("--report", type=Path, required=True,
                   help="the JSONL report, written anew (one line per case)")
    p.add_argument("--validation-only", action="store_true",
                   help="judge correctness only; no timing")
    p.add_argument("--scale-probe", action="store_true",
                   help="also call each solution with its runtime scale scalars changed and "
                   "judge it against the reference on those inputs (record: scale_probe)")
    p.add_argument("--reference-cache", action="store_true",
                   help="keep reference outputs in the cache directory and reuse them "
                   "(default: computed for every case)")
    p.add_argument("--graph-timing", action="store_true",
                   help="accepted; changes nothing here: on a GPU the harness always times a "
                   "CUDA graph of the task's iters calls per replay (the prepared launch "
                   "when the solution has prepare), falling back to eager calls with "
                   "graph_capture_error in the record; on the CPU it times eager calls")
    p.add_argument("--strict-diagnostic", action="store_true",
                   help="also judge each output under the task's diagnostic_tolerance, "
                   "reported in the record's diagnostic; never changes the verdict")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.candidate and (not args.definition or len(set(args.definition)) != 1):
        return _harness.error("--candidate needs exactly one --definition")
    root, device, problem = _harness.start(args)
    if problem:
        return _harness.error(problem)
    from hf_eval.data.errors import DataError

    try:
        selection = _selection(args, root, device)
    except DataError as err:
        return _harness.error(str(err))
    if isinstance(selection, int):
        return selection
    argv = ["--root", root, "audit", "--suite", args.suite, "--device", device,
            "--report", args.report, *selection]
    if args.data_root is not None:
        argv += ["--data-root", args.data_root.resolve()]
    for path in args.candidate:
        argv += ["--candidate", path]
    for flag in ("validation_only", "scale_probe", "strict_diagnostic"):
        if getattr(args, flag):
            argv.append("--" + flag.replace("_", "-"))
    if not args.reference_cache:
        argv.append("--no-reference-cache")
    try:
        with _harness.gpu_locks(args.lock_directory, args.gpu):
            return _harness.run_harness(argv, PROG)
    except _harness.LockHeld as held:
        return _harness.error(str(held))


def _selection(args: argparse.Namespace, root: Path, device: str) -> list[str] | int:
    """The harness's --definitions, --solutions and --uuid for the published flags (or an
    exit status after an error line)."""
    out: list[str] = []
    if args.definition:
        out += ["--definitions", ",".join(args.definition)]
    if not (args.workload or args.only_default):
        return [*out, "--solutions", ",".join(args.solution) if args.solution else "all"]
    import torch

    from hf_eval.data.repository import DatasetFiles
    from hf_eval.judge.audit import runs_on, select_workloads

    files = DatasetFiles.read(root)
    definitions = args.definition or sorted(files.workloads)
    if args.workload:
        in_suite = {row.value.workload.uuid for name in definitions
                    for row in select_workloads(files, files.task(name), name, args.suite, [])}
        uuids = [u for u in dict.fromkeys(args.workload) if u in in_suite]
        if not uuids:
            return _harness.error(f"--workload: none of {', '.join(args.workload)} is in "
                                  f"suite {args.suite} of the selected definitions (--suite "
                                  "all selects every workload)")
        out += ["--uuid", ",".join(uuids)]
    if not args.only_default:
        return [*out, "--solutions", ",".join(args.solution) if args.solution else "all"]
    names = []
    for name in definitions:
        baseline = {f"sglang_{name}", files.task(name).engine_baseline}
        names += [s.name for s in files.solutions_for(name)
                  if s.name not in baseline and runs_on(s, torch.device(device))
                  and (not args.solution or s.name in args.solution)]
    if not names and not args.candidate:
        return _harness.error("--only-default: no solution is left to audit once the "
                              "engine's baseline is left out")
    return [*out, "--solutions", ",".join(names) or "none"]


if __name__ == "__main__":
    sys.exit(main())
