"""The dataset-building subcommands of the command line (:mod:`hf_eval.cli`): ``capture``,
``replay``, ``import-fib`` and ``export-fib``; the work is in :mod:`hf_eval.capture`.

Outside that package so that building the parser imports nothing of it: ``hf-eval --help``
must not import torch. Each command imports its module when it runs."""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def cmd_capture(args: argparse.Namespace) -> int:
    from hf_eval.capture import Capture, Limits, Sampling

    limits = Limits(calls_per_definition=args.max_calls, bytes_per_definition=args.max_bytes,
                    bytes_total=args.max_bytes_total)
    sampling = Sampling(every=args.every, start=args.start, stop=args.stop)
    argv = sys.argv
    sys.argv = [str(args.script), *args.script_args]
    try:
        with Capture(args.root, program=args.program or args.script.name, model=args.model,
                     revision=args.revision, ops=args.ops, limits=limits, sampling=sampling,
                     propose=args.propose) as capture:
            runpy.run_path(str(args.script), run_name="__main__")
    finally:
        sys.argv = argv
    for line in capture.report.lines():
        print(line)
    if args.report_json:
        args.report_json.write_text(json.dumps(capture.report.to_json(), indent=2) + "\n")
    return 1 if capture.report.errors else 0


def cmd_replay(args: argparse.Namespace) -> int:
    from hf_eval.capture.replay import replay

    result = replay(args.root, definitions=args.definitions, uuids=args.uuid,
                    device=args.device, write=not args.no_write)
    for line in result.lines():
        print(line)
    return result.exit_code


def cmd_import_fib(args: argparse.Namespace) -> int:
    from hf_eval.capture.interop import import_fib

    result = import_fib(args.source, args.root, seed=args.materialise_random,
                        source_name=args.source_name)
    for line in result.lines():
        print(line)
    return 0


def cmd_export_fib(args: argparse.Namespace) -> int:
    from hf_eval.capture.interop import export_fib

    for line in export_fib(args.root, args.dest, args.definitions).lines():
        print(line)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the dataset-building subcommands to the main parser."""
    c = sub.add_parser("capture", help="run a Python program and capture its operator calls")
    c.add_argument("script", type=Path, help="the program to run (as __main__)")
    c.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    c.add_argument("--program", help="provenance name of the program (default: script name)")
    c.add_argument("--model", help="model name recorded in the receipts")
    c.add_argument("--revision", help="model revision recorded in the receipts")
    c.add_argument("--ops", type=_csv, default=["sdpa", "linear", "flex_attention"],
                   help="comma-separated ops to hook (default: sdpa,linear,flex_attention)")
    c.add_argument("--propose", action="store_true",
                   help="propose (and write) per-shape definitions for unmatched calls")
    c.add_argument("--max-calls", type=int, default=32, help="workloads per definition")
    c.add_argument("--max-bytes", type=int, default=256 << 20,
                   help="new tensor bytes per definition")
    c.add_argument("--max-bytes-total", type=int, help="new tensor bytes in all")
    c.add_argument("--every", type=int, default=1, help="sample every N-th call of each op")
    c.add_argument("--start", type=int, default=0, help="first call index sampled")
    c.add_argument("--stop", type=int, help="call index at which sampling stops")
    c.add_argument("--report-json", type=Path, help="also write the capture report here")
    c.set_defaults(func=cmd_capture)

    r = sub.add_parser("replay", help="judge each receipt's engine output (expected_output) "
                       "against the reference", description="Judge each selected receipt's "
                       "engine output (expected_output) against the definition's reference "
                       "under the task's tolerance, and record the result in the receipt "
                       "(validation.replay). Receipts without one are counted. Exit 1 when an "
                       "engine output fails; 2 on a DATA_ERROR, a receipt that does not "
                       "load, or when nothing in the selection has an engine output.")
    r.add_argument("--definitions", type=_csv, help="comma-separated names (default: all)")
    r.add_argument("--uuid", action="append", help="replay only these workload UUIDs")
    r.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    r.add_argument("--no-write", action="store_true", help="do not record results in receipts")
    r.set_defaults(func=cmd_replay)

    i = sub.add_parser("import-fib", help="import a FlashInfer Trace directory into --root")
    i.add_argument("source", type=Path, help="FlashInfer Trace directory")
    i.add_argument("--materialise-random", type=int, metavar="SEED",
                   help="draw 'random' inputs from this seed (recorded); refused otherwise")
    i.add_argument("--source-name", help="name of the source recorded in receipts")
    i.set_defaults(func=cmd_import_fib)

    e = sub.add_parser("export-fib", help="write --root as a FlashInfer Trace directory")
    e.add_argument("dest", type=Path, help="new (or empty) directory")
    e.add_argument("--definitions", type=_csv, help="comma-separated names (default: all)")
    e.set_defaults(func=cmd_export_fib)
