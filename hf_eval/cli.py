"""Command line: ``python -m hf_eval {audit,check,samples}`` (argument parsing only)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hf_eval.errors import DataError

DEFAULT_ROOT = Path(__file__).resolve().parent.parent


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def cmd_audit(args: argparse.Namespace) -> int:
    from hf_eval.repository import Dataset
    from hf_eval.runner import Audit, AuditConfig

    dataset = Dataset.load(args.root)
    touched = set(args.definitions or dataset.definitions)
    blocking = [p for p in dataset.problems if any(name in p.file for name in touched)]
    for problem in blocking:
        print(f"error: {problem}", file=sys.stderr)
    if blocking:
        return 2
    report = args.report or Path("reports") / f"audit-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    config = AuditConfig(report=report, definitions=args.definitions, solutions=args.solutions,
                         suite=args.suite, uuids=args.uuid or [], device=args.device,
                         validation_only=args.validation_only,
                         reference_cache=not args.no_reference_cache)
    return Audit(dataset, config).run()


def cmd_check(args: argparse.Namespace) -> int:
    from hf_eval.checker import run_check

    problems, notes = run_check(args.root, lazy=args.lazy)
    for line in problems:
        print(line)
    for line in notes:
        print(f"note: {line}", file=sys.stderr)
    print(f"check: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


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
    a.add_argument("--suite", default="sample", choices=["sample", "first", "dev", "all"])
    a.add_argument("--uuid", action="append", help="audit only these workload UUIDs")
    a.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    a.add_argument("--report", type=Path, help="JSONL report path (default: reports/audit-*.jsonl)")
    a.add_argument("--validation-only", action="store_true", help="check correctness, no timing")
    a.add_argument("--no-reference-cache", action="store_true",
                   help="always recompute reference outputs")
    a.set_defaults(func=cmd_audit)

    c = sub.add_parser("check", help="verify every definition, workload, tensor and receipt")
    c.add_argument("--lazy", action="store_true",
                   help="skip (and count) workloads whose tensors are not present locally")
    c.set_defaults(func=cmd_check)

    s = sub.add_parser("samples", help="the embedded, generated sample")
    ssub = s.add_subparsers(dest="samples_command", required=True)
    b = ssub.add_parser("build", help="regenerate sample workloads, tensors and receipts")
    b.add_argument("--definition", action="append", help="only this definition (repeatable)")
    b.set_defaults(func=cmd_samples_build)
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
