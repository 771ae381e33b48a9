"""Command line: ``python -m hf_eval <command>`` (argument parsing only; work lives elsewhere)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hf_eval.errors import DataError
from hf_eval.runner import SUITES

DEFAULT_ROOT = Path(__file__).resolve().parent.parent


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def cmd_audit(args: argparse.Namespace) -> int:
    from hf_eval.modules import solution_from_directory
    from hf_eval.repository import Dataset
    from hf_eval.runner import Audit, AuditConfig

    dataset = Dataset.load(args.root)
    # Auditing everything: any bad file is an error. Auditing named definitions: only
    # problems in files that belong to them.
    blocking = [p for p in dataset.problems
                if not args.definitions or any(name in p.file for name in args.definitions)]
    for problem in blocking:
        print(f"error: {problem}", file=sys.stderr)
    if blocking:
        return 2
    extra = []
    if args.candidate:
        if not args.definitions or len(args.definitions) != 1:
            print("error: --candidate needs exactly one --definitions name", file=sys.stderr)
            return 2
        extra.append(solution_from_directory(args.candidate, args.definitions[0]))
    report = args.report or Path("reports") / f"audit-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    if args.resume and not args.report:
        print("error: --resume needs the --report to continue", file=sys.stderr)
        return 2
    devices = [f"cuda:{i}" for i in args.gpus] if args.gpus else [args.device]
    config = AuditConfig(report=report, definitions=args.definitions,
                         solutions="none" if extra and args.solutions == "preferred"
                         else args.solutions,
                         extra_solutions=extra, suite=args.suite, uuids=args.uuid or [],
                         devices=devices, validation_only=args.validation_only,
                         reference_cache=not args.no_reference_cache, resume=args.resume,
                         cold_l2=args.cold_l2, strict_diagnostic=args.strict_diagnostic,
                         scale_probe=args.scale_probe)
    return Audit(dataset, config).run()


def cmd_summarize(args: argparse.Namespace) -> int:
    from hf_eval.summary import summarize

    summary_path, performance_path = summarize(args.reports, args.out)
    print(f"wrote {summary_path} and {performance_path}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from hf_eval.checker import run_check

    problems, notes = run_check(args.root, lazy=args.lazy)
    for line in problems:
        print(line)
    for line in notes:
        print(f"note: {line}", file=sys.stderr)
    print(f"check: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


def cmd_card(args: argparse.Namespace) -> int:
    from hf_eval.card import main as write_card

    return write_card(args.root, check=args.check)


def cmd_samples_build(args: argparse.Namespace) -> int:
    from hf_eval.samples.build import build

    for name in build(args.root, args.definition or None):
        print(f"built {name}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hf-eval", description=__doc__)
    p.add_argument("--root", type=Path, default=DEFAULT_ROOT,
                   help="dataset root (default: this repository)")
    sub = p.add_subparsers(dest="command", required=True)

    a = sub.add_parser("audit", help="judge solutions on workloads; one JSON line per case")
    a.add_argument("--definitions", type=_csv, help="comma-separated names (default: all)")
    a.add_argument("--solutions", default="preferred",
                   help="'preferred' (per task and hardware), 'all', or comma-separated names")
    a.add_argument("--suite", default="sample", choices=SUITES,
                   help="sample (generated workloads), first, dev (the task's), all")
    a.add_argument("--uuid", action="append", help="audit only these workload UUIDs")
    a.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    a.add_argument("--report", type=Path, help="JSONL report path (default: reports/audit-*.jsonl)")
    a.add_argument("--validation-only", action="store_true", help="check correctness, no timing")
    a.add_argument("--no-reference-cache", action="store_true",
                   help="always recompute reference outputs")
    a.add_argument("--candidate", type=Path,
                   help="path/to/main.py: audit this module (and its package) for one definition")
    a.add_argument("--gpus", type=_csv, help="e.g. 0,1: one worker per GPU of this host")
    a.add_argument("--resume", action="store_true",
                   help="append to --report, skipping cases it already holds")
    a.add_argument("--cold-l2", action="store_true", help="flush the L2 cache between trials")
    a.add_argument("--strict-diagnostic", action="store_true",
                   help="also report each task's diagnostic_tolerance (never acceptance)")
    a.add_argument("--scale-probe", action="store_true",
                   help="call again with runtime *scale* scalars halved")
    a.set_defaults(func=cmd_audit)

    c = sub.add_parser("check", help="verify every definition, workload, tensor and receipt")
    c.add_argument("--lazy", action="store_true",
                   help="skip (and count) workloads whose tensors are not present locally")
    c.set_defaults(func=cmd_check)

    m = sub.add_parser("summarize", help="reports -> summary.json and performance.md")
    m.add_argument("reports", type=Path, nargs="+", help="audit JSONL reports")
    m.add_argument("--out", type=Path, default=Path("reports"), help="output directory")
    m.set_defaults(func=cmd_summarize)

    k = sub.add_parser("card", help="regenerate the README's configs: (viewer, load_dataset)")
    k.add_argument("--check", action="store_true",
                   help="only report whether README.md is up to date (exit 1 if not)")
    k.set_defaults(func=cmd_card)

    s = sub.add_parser("samples", help="the embedded, generated sample")
    ssub = s.add_subparsers(dest="samples_command", required=True)
    b = ssub.add_parser("build", help="regenerate sample workloads, tensors and receipts")
    b.add_argument("--definition", action="append", help="only this definition (repeatable)")
    b.set_defaults(func=cmd_samples_build)

    from hf_eval.capture.commands import register as register_dataset_building

    register_dataset_building(sub)  # capture, replay, import-fib, export-fib

    from hf_eval.interfaces_readme import register as register_interfaces

    register_interfaces(sub)  # interfaces render, interfaces verify
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
