"""The command line (``python -m hf_eval`` or ``hf-eval``): arguments in, exit codes out.

This file parses arguments, finds the dataset root (:func:`discover_root`), calls the
module that does each command's work, renders its results as lines and the audit's
progress (a bar on a terminal, else a line per case), and turns outcomes into the exit
codes documented in ``EPILOG``. Each command imports its modules inside its ``cmd_*``
function, on purpose: ``hf-eval --help`` (and a typo's usage error) must not import
torch, which takes seconds.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from hf_eval.data.errors import DataError
from hf_eval.data.repository import ROOT_VARIABLE, discover_root
from hf_eval.data.suites import DEFAULT_SUITE, SUITES

DESCRIPTION = """\
Judge inference kernels against real workloads; check the dataset itself.

Start here:
  %(prog)s audit
      every definition's preferred solution on its task's dev workloads
  %(prog)s list definitions
      what there is to audit (also: list solutions, list suites)
  %(prog)s audit --definitions NAME --solutions YOURS --suite dev
      your solution on one definition's dev workloads
  %(prog)s check
      verify every file and tensor of the dataset (never writes)

Run '%(prog)s COMMAND --help' for a command's options."""

EPILOG = """\
exit status:
  0    every case passed (check: no problem found)
  1    a candidate failed: a case's status is not PASSED and not DATA_ERROR
       (check: at least one problem found; replay: an engine output failed)
  2    bad input or data: a file that does not load, a DATA_ERROR, a missing or
       damaged report, a selection that matches no case (replay: none of it has
       an engine output), a bad argument; also
       an audit that could not finish (the harness failed, on a full disk say,
       or with --ray the cluster): the report keeps what was judged (--resume)
  130  interrupted

State outside the clone: ~/.cache/inference-kernels ($HF_EVAL_CACHE) holds
reference outputs, verified hashes and written solution packages; see
docs/manual.md, "Where state lives"."""


def _csv(text: str) -> list[str]:
    """One argument of a list option: comma-separated (``action="extend"`` adds repeats)."""
    return [t.strip() for t in text.split(",") if t.strip()]


def _unique(values: list[str] | None) -> list[str] | None:
    """A list option's values in the order given, each once (``--uuid A,B --uuid A``)."""
    return list(dict.fromkeys(values)) if values else values


def _require_dataset(root: Path) -> None:
    """A wrong ``--root`` is an error, not an empty dataset that passes every check."""
    if not (root / "definitions").is_dir():
        raise DataError(root, "not a dataset root: it has no definitions/ directory "
                        "(see --root)")


def cmd_audit(args: argparse.Namespace) -> int:
    from hf_eval.data.sources import solution_from_directory
    from hf_eval.dataset import open_dataset
    from hf_eval.judge.audit import Audit, AuditAborted, AuditConfig
    from hf_eval.judge.records import exit_code
    from hf_eval.judge.report import print_summary, repair_for_resume, safe_text

    _require_dataset(args.root)
    args.definitions, args.uuid = _unique(args.definitions), _unique(args.uuid)
    args.solutions = _unique(args.solutions)
    if args.data_root is not None and not args.data_root.is_dir():
        print(f"error: --data-root {args.data_root}: not a folder", file=sys.stderr)
        return 2
    dataset = open_dataset(args.root, data_root=args.data_root)
    # Auditing everything: any bad file is an error. Auditing named definitions: only
    # problems in files that belong to them (by path, or by a rejected file's own field).
    # A bad file is refused, not the audit: the rest runs, and the exit code is then 2.
    blocking = dataset.problems_for(args.definitions)
    for problem in blocking:
        print(f"error: {safe_text(problem)}", file=sys.stderr)
    named = [n for n in args.solutions or [] if n not in ("preferred", "all", "none")]
    rejected = {r.name for r in dataset.rejected if r.kind == "solution"}
    for name in named:
        if name in rejected:
            continue  # its file's problem is printed above
        if name not in dataset.solutions:
            print(f"error: --solutions: unknown solution {name!r} (see 'list solutions')",
                  file=sys.stderr)
            return 2
        owner = dataset.solutions[name].value.definition
        if args.definitions and owner not in args.definitions:
            print(f"error: --solutions: {name!r} is a solution of {owner}, which is not "
                  "among --definitions", file=sys.stderr)
            return 2
    extra = []
    if args.candidate:
        if not args.definitions or len(args.definitions) != 1:
            print("error: --candidate needs exactly one --definitions name", file=sys.stderr)
            return 2
        extra += [solution_from_directory(path, args.definitions[0]) for path in args.candidate]
    report = args.report or Path("reports") / f"audit-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    if args.resume and not args.report:
        print("error: --resume needs the --report to continue", file=sys.stderr)
        return 2
    if args.resume and args.suite == "fresh" and not args.uuid:
        print("error: --resume cannot continue a fresh suite: its cases are drawn from the "
              "interrupted audit's secret, which is gone", file=sys.stderr)
        return 2
    if args.resume:
        for note in repair_for_resume(report):
            print(f"note: {note}", file=sys.stderr)
    if args.ray is not None and args.gpus:  # an argument error, before any device check
        print("error: --ray takes its GPUs from the cluster (one lane each); --gpus is "
              "for the local path", file=sys.stderr)
        return 2
    devices = [f"cuda:{i}" for i in args.gpus] if args.gpus else [args.device]
    for device in devices:
        problem = _device_problem(device)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    problem = _report_problem(report, append=args.resume)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    solutions = ",".join(args.solutions or ["none" if extra else "preferred"])
    config = AuditConfig(report=report, definitions=args.definitions, solutions=solutions,
                         extra_solutions=extra, suite=args.suite, uuids=args.uuid or [],
                         devices=devices, validation_only=args.validation_only,
                         reference_cache=not args.no_reference_cache, resume=args.resume,
                         strict_diagnostic=args.strict_diagnostic,
                         scale_probe=args.scale_probe)
    #: The Ray path's own errors (lazily imported): the cluster could not finish the audit.
    cluster_errors: tuple[type[Exception], ...] = ()
    if args.ray is not None:
        try:
            from hf_eval.judge.distributed import RayAudit, RayAuditError
        except ImportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            audit = RayAudit(dataset, config, address=args.ray or None)
            cluster_errors = (RayAuditError,)
        except RayAuditError as exc:
            print(f"error: {safe_text(exc)}", file=sys.stderr)
            return 2
    else:
        audit = Audit(dataset, config)
    total = audit.cases()
    for problem in audit.refused:
        print(f"error: {safe_text(problem)}", file=sys.stderr)
    if not total and not args.resume:
        if blocking or audit.refused:
            return 2  # the lines above say why
        print("error: the selection matches no case (see 'list definitions', 'list suites' "
              "and the --uuid values)", file=sys.stderr)
        return 2
    shown = list(audit.notes)
    for note in shown:
        print(f"note: {safe_text(note)}", file=sys.stderr)
    progress, on_record = _progress(total)
    with progress:
        try:
            records = audit.run(on_record=on_record)
        except cluster_errors as exc:
            print(f"error: {safe_text(exc)}", file=sys.stderr)
            return 2
        except AuditAborted as exc:
            _new_notes(audit.notes, shown)
            for chunk in traceback.format_exception(exc.__cause__ or exc):
                for line in chunk.rstrip("\n").split("\n"):
                    print(safe_text(line), file=sys.stderr)
            print(f"error: {safe_text(exc)}", file=sys.stderr)
            print(f"report: {safe_text(report)} holds the {len(audit.records)} case(s) "
                  f"judged before; continue with --resume --report {safe_text(report)}",
                  file=sys.stderr)
            return 2
    if args.ray is not None:
        print(f"note: {safe_text(audit.summary())}", file=sys.stderr)
    _new_notes(audit.notes, shown)
    print_summary([r.model_dump(mode="json") for r in records], report=report)
    return 2 if blocking or audit.refused else exit_code(records)


def _new_notes(notes: list[str], shown: list[str]) -> None:
    """Print the notes the run itself added (a worker replaced or slow to die)."""
    from hf_eval.judge.report import safe_text

    for note in notes:
        if note not in shown:
            print(f"note: {safe_text(note)}", file=sys.stderr)


def _device_problem(device: str) -> str | None:
    """Why ``--device``/``--gpus`` names no device this machine can run on, or None."""
    import torch

    try:
        parsed = torch.device(device)
    except RuntimeError:
        return f"--device {device}: not a device name (cpu, cuda or cuda:N)"
    if parsed.type == "cpu":
        return None
    if parsed.type != "cuda":
        return f"--device {device}: the audit runs on cpu or cuda, not {parsed.type}"
    if not torch.cuda.is_available():
        built = "without CUDA" if torch.version.cuda is None else f"for CUDA {torch.version.cuda}"
        return (f"--device {device}: this machine has no usable CUDA device (torch "
                f"{torch.__version__}, built {built}); use --device cpu")
    count = torch.cuda.device_count()
    if parsed.index is not None and parsed.index >= count:
        return f"--device {device}: this machine has {count} CUDA device(s)"
    return None


def _report_problem(report: Path, append: bool) -> str | None:
    """Why the report cannot be written, or None (checked before any case is judged, so
    no work is lost to it). Nothing is written here: an existing report is left as is."""
    above = next((p for p in report.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        return f"--report {report}: {above} is a file, not a folder"
    try:
        report.parent.mkdir(parents=True, exist_ok=True)
        if report.exists():
            if not os.access(report, os.W_OK) or report.is_dir():
                return f"--report {report}: not a writable file"
        elif not os.access(report.parent, os.W_OK | os.X_OK):
            return f"--report {report}: its folder is not writable"
    except OSError as exc:
        return f"--report {report}: {exc.strerror or exc}"
    return None


def progress_line(done: int, total: int, record: dict) -> str:
    """One case as it completes, for output that is not a terminal: ``[3/21] <definition>
    workload <first 8 of the UUID> solution <name>: <status> [<ms> ms (<method>)]``."""
    from hf_eval.judge.records import reported_time
    from hf_eval.judge.report import safe_text

    timed = reported_time(record)
    shown = f" {timed[1]:.4g} ms ({timed[0]})" if timed else ""
    return safe_text(f"[{done}/{total}] {record.get('definition')} workload "
                     f"{str(record.get('workload'))[:8]} solution {record.get('solution')}: "
                     f"{record.get('status')}{shown}")


def _progress(total: int) -> tuple[AbstractContextManager, Callable[[dict], None]]:
    """How the audit shows each completed case on stderr: a progress bar on a terminal,
    else one :func:`progress_line` per case (a log, CI, an agent's pipe)."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        bar = Progress("audit", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=Console(stderr=True), transient=True)
        task = bar.add_task("audit", total=total)
        return bar, lambda _: bar.advance(task)
    done = 0

    def line(record: dict) -> None:
        nonlocal done
        done += 1
        print(progress_line(done, total, record), file=sys.stderr, flush=True)

    return nullcontext(), line


def cmd_serve(args: argparse.Namespace) -> int:
    from hf_eval.isolation.walls import SandboxError
    from hf_eval.judge.report import safe_text
    from hf_eval.judge.serve import serve

    _require_dataset(args.root)
    report = args.report or Path("reports") / f"serve-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    problem = _device_problem(args.device) or _report_problem(report, append=True)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2

    def ready(url: str) -> None:
        print(f"serving on {url} (report: {safe_text(report)})", flush=True)

    def note(text: str) -> None:
        print(f"note: {safe_text(text)}", file=sys.stderr, flush=True)

    try:
        return serve(args.root, report, host=args.host, port=args.port, device=args.device,
                     on_ready=ready, on_note=note)
    except SandboxError as exc:  # the walls could not be built: nothing can be judged
        print(f"error: {safe_text(exc)}", file=sys.stderr)
        return 2


def cmd_summarize(args: argparse.Namespace) -> int:
    from hf_eval.judge.report import safe_text
    from hf_eval.judge.summary import summarize

    summary_path, performance_path, notes = summarize(args.reports, args.out)
    for note in notes:
        print(f"note: {safe_text(note)}", file=sys.stderr)
    print(f"wrote {summary_path} and {performance_path}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from hf_eval import listing
    from hf_eval.dataset import open_dataset
    from hf_eval.judge.report import safe_text

    _require_dataset(args.root)
    dataset = open_dataset(args.root, resolvers=[])
    unknown = [n for n in args.definitions or [] if n not in dataset.definitions]
    if unknown:
        print(f"error: --definitions: unknown definition(s) {', '.join(map(repr, unknown))} "
              "(see 'list definitions')", file=sys.stderr)
        return 2
    for problem in dataset.problems_for(args.definitions):
        print(f"note: not listed: {safe_text(problem)}", file=sys.stderr)
    if args.what == "definitions":
        lines = listing.definitions(dataset, names=args.names)
    elif args.what == "solutions":
        lines = listing.solutions(dataset, args.definitions, names=args.names)
    else:
        lines = listing.suites(dataset, names=args.names)
    for line in lines:  # names from the dataset's files are escaped by listing
        print(line)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from hf_eval.checker import run_check
    from hf_eval.judge.report import safe_text

    _require_dataset(args.root)
    problems, notes = run_check(args.root, lazy=args.lazy, rehash=args.rehash)
    for line in problems:
        print(safe_text(line))
    for line in notes:
        print(f"note: {safe_text(line)}", file=sys.stderr)
    print(f"check: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


def cmd_card(args: argparse.Namespace) -> int:
    from hf_eval.hub.card import main as write_card

    return write_card(args.root, check=args.check)


def cmd_samples_build(args: argparse.Namespace) -> int:
    from hf_eval.samples.build import build

    for name in build(args.root, args.definition or None):
        print(f"built {name}")
    return 0


def cmd_bench_run(args: argparse.Namespace) -> int:
    from hf_eval.bench.run import run

    _require_dataset(args.root)
    return run(args.root, args.out, definitions=_unique(args.definitions),
               solutions=",".join(args.solutions) if args.solutions else None,
               ceilings_file=args.ceilings, samples=args.samples,
               shapes=_unique(args.shapes))


def cmd_bench_report(args: argparse.Namespace) -> int:
    from hf_eval.bench.report import GOALS_PATH, build

    _require_dataset(args.root)
    if args.dir is None:  # the repository's own layout: records, report, document
        folder = args.root / "results" / "h200"
        out, doc = args.out or folder / "report", args.doc or args.root / "docs" / "h200"
    else:  # a folder of one's own: everything in it unless told otherwise
        folder = args.dir
        out = args.out or folder
        doc = args.doc or out
    for path in build(folder, args.root, args.goals or GOALS_PATH, out=out, doc=doc):
        print(f"wrote {path}")
    return 0


def _add_definitions(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--definitions", type=_csv, action="extend", metavar="NAME[,NAME...]",
                   help=f"{what}; comma-separated, repeatable (see 'list definitions')")


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``prog`` is how the user ran it (``python -m hf_eval`` or ``hf-eval``)."""
    p = argparse.ArgumentParser(prog=prog or _prog(), description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", type=Path, default=None,
                   help=f"dataset root (default: ${ROOT_VARIABLE}, else the clone this "
                   "harness is in, else the current directory or a parent holding "
                   "definitions/)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    a = sub.add_parser("audit", help="judge solutions on workloads; one JSON line per case",
                       description="Judge solutions on workloads: a verdict and timings per\n"
                       "case, one JSON line each in the report, a summary table at the end.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_definitions(a, "audit only these definitions (default: all)")
    a.add_argument("--solutions", type=_csv, action="extend", metavar="NAME[,NAME...]",
                   help="'preferred' (default: per task and hardware), 'all', or solution "
                   "names; comma-separated, repeatable (see 'list solutions')")
    a.add_argument("--suite", default=DEFAULT_SUITE, choices=SUITES,
                   help="which workloads: dev = the task's dev UUIDs (the default; the rest "
                   "is held out); all = every workload; sample = the generated sample "
                   "(every workload here); first = the first line of each definition's "
                   "workload file, a quick smoke test; fresh = new cases drawn now from the "
                   "sample's generators and recipes with a secret seed (never written)")
    a.add_argument("--uuid", type=_csv, action="extend", metavar="UUID[,UUID...]",
                   help="audit only these workload UUIDs (overrides --suite); "
                   "comma-separated, repeatable")
    a.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    a.add_argument("--report", type=Path, help="JSONL report path (default: reports/audit-*.jsonl)")
    a.add_argument("--validation-only", action="store_true", help="check correctness, no timing")
    a.add_argument("--no-reference-cache", action="store_true",
                   help="always recompute reference outputs")
    a.add_argument("--candidate", type=Path, action="append",
                   help="path/to/main.py: audit this module (and its package) for one "
                   "definition (repeatable)")
    a.add_argument("--data-root", type=Path,
                   help="read the workloads' tensors from this folder (same relative paths "
                   "as under the root; default: the root)")
    a.add_argument("--gpus", type=_csv, action="extend",
                   help="e.g. 0,1: one worker per GPU of this host (repeatable)")
    a.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run the units on a Ray cluster, one lane per GPU (--device cuda) or "
                   "CPU: no ADDRESS starts a local Ray (or joins $RAY_ADDRESS), 'auto' or "
                   "HOST:PORT joins a running one; needs pip install 'hf-eval[ray]' "
                   "(docs/ray.md)")
    a.add_argument("--resume", action="store_true",
                   help="append to --report, skipping cases it already holds; a torn last "
                   "line (an interrupted write) is dropped and that case audited again")
    a.add_argument("--strict-diagnostic", action="store_true",
                   help="also report each task's diagnostic_tolerance (never acceptance)")
    a.add_argument("--scale-probe", action="store_true",
                   help="call again with the runtime scale halved (a zero one: half of "
                   "1/sqrt(head_size)) and other non-zero *scale* scalars halved")
    a.set_defaults(func=cmd_audit)

    v = sub.add_parser("serve", help="keep the audit warm for an agent: POST a candidate, "
                       "get its records streamed (local HTTP)",
                       description="A persistent audit over local HTTP for an agent's loop: "
                       "the dataset, the workers' fork server and stand-in, and each "
                       "definition's inputs and references stay warm between requests; every "
                       "candidate still gets a fresh confined worker. GET /health; POST "
                       "/audit with {\"definition\": NAME, \"main_py\": SOURCE} (or "
                       "\"solution\": a Solution JSON object; optional \"suite\", \"uuids\", "
                       "\"validation_only\", \"name\") answers one JSON line per case as "
                       "it is judged, then a {\"done\": true, ...} line. Every record is "
                       "also appended to --report. Stops on SIGINT or SIGTERM (exit 0).")
    v.add_argument("--host", default="127.0.0.1", help="address to listen on (default: "
                   "127.0.0.1, this machine only)")
    v.add_argument("--port", type=int, default=8765,
                   help="port (default: 8765; 0 picks a free one, printed when ready)")
    v.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    v.add_argument("--report", type=Path,
                   help="JSONL report every record is appended to (default: "
                   "reports/serve-*.jsonl)")
    v.set_defaults(func=cmd_serve)

    c = sub.add_parser("check", help="verify every definition, workload, tensor and receipt",
                       description="Verify every definition, workload, tensor and receipt. "
                       "Read-only: an absent or damaged file is reported, never fetched, "
                       "regenerated or repaired. Large sample tensors that are not in git are "
                       "drawn in memory to be verified when absent. Exit 1 "
                       "when a problem is found, 2 when the dataset cannot be read.")
    c.add_argument("--lazy", action="store_true",
                   help="skip (and count) workloads whose tensors are not present locally, "
                   "instead of reporting them or drawing regenerable ones in memory")
    c.add_argument("--rehash", action="store_true",
                   help="hash every tensor file again, trusting no remembered hash")
    c.set_defaults(func=cmd_check)

    ls = sub.add_parser("list", help="names of definitions, solutions or suites",
                        description="One per line, name first: what 'audit' accepts.")
    ls.add_argument("what", choices=("definitions", "solutions", "suites"))
    _add_definitions(ls, "solutions: only those of these definitions")
    ls.add_argument("--names", action="store_true", help="bare names, one per line (scripts)")
    ls.set_defaults(func=cmd_list)

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

    g = sub.add_parser("bench", help="time solutions at realistic shapes on a GPU; the H200 "
                       "report", description="Device campaigns (records in results/h200): "
                       "realistic-scale benchmark shapes judged and timed through the audit's "
                       "checks, and the report that turns device runs into "
                       "docs/h200/performance.md.")
    gsub = g.add_subparsers(dest="bench_command", required=True, metavar="COMMAND")
    r = gsub.add_parser("run", help="time GPU solutions at every benchmark shape (CUDA only)",
                        description="Measure the ceilings (or read --ceilings), then judge and "
                        "time the chosen GPU solutions at every benchmark shape "
                        "(hf_eval/families/<op_type>/<definition>.shapes.json; inputs drawn on the "
                        "device, timing only). Appends one JSON line per definition, shape and "
                        "solution to OUT/bench.jsonl. Exit 2 without a CUDA device.")
    r.add_argument("--out", type=Path, required=True,
                   help="directory for ceilings.json, bench.jsonl (and results.jsonl)")
    _add_definitions(r, "only these definitions (default: every shape file)")
    r.add_argument("--solutions", type=_csv, action="extend", metavar="NAME[,NAME...]",
                   help="solution names and the keywords 'baseline' and 'preferred' (the "
                   "task's H200 pick); default: every GPU solution of the definition")
    r.add_argument("--ceilings", type=Path,
                   help="a ceilings.json measured earlier on this machine (default: measure)")
    r.add_argument("--shapes", type=_csv, action="extend", metavar="LABEL[,LABEL...]",
                   help="only the shapes with these labels (default: every shape of the "
                   "file); a label that names no shape is an error")
    r.add_argument("--samples", action="store_true",
                   help="first audit each definition's sample workloads with the same workers "
                   "(validation only), into results.jsonl beside bench.jsonl")
    r.set_defaults(func=cmd_bench_run)
    q = gsub.add_parser("report", help="device-run files -> summary, performance, preferred",
                        description="Read the device runs' records (results.jsonl, "
                        "bench.jsonl, ceilings*.json, env*.txt, in --dir and in each "
                        "<date>-<what>/ run folder in it that holds records, oldest first), "
                        "the report's commands.txt and the document's notes.md; write "
                        "summary.json and preferred-solutions.json to --out and "
                        "performance.md to --doc.")
    q.add_argument("--dir", type=Path, help="the runs' folder (default: <root>/results/h200)")
    q.add_argument("--out", type=Path, help="the report's folder (default: "
                   "<root>/results/h200/report, or --dir when --dir is given)")
    q.add_argument("--doc", type=Path, help="where performance.md goes, beside notes.md "
                   "(default: <root>/docs/h200, or --out when --dir is given)")
    q.add_argument("--goals", type=Path,
                   help="the goals to judge (default: hf_eval/bench/goals.json)")
    q.set_defaults(func=cmd_bench_report)

    from hf_eval.cli_capture import register as register_dataset_building

    register_dataset_building(sub)  # capture, replay, import-fib, export-fib

    from hf_eval.interfaces.readme import register as register_interfaces

    register_interfaces(sub)  # interfaces render, interfaces verify
    return p


def _prog() -> str:
    """``python -m hf_eval`` when run as a module, else the script's name (``hf-eval``)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "hf-eval"
    return "python -m hf_eval" if name in ("__main__.py", "-m", "-c", "") else name


#: Whether a command is running (Ctrl-C then stops it) and whether Ctrl-C was pressed.
_CTRL_C = {"running": False, "pressed": False}


def _interrupt(signum: int, frame: object) -> None:
    """The first Ctrl-C stops the running command; later ones are ignored, so the
    clean-up it starts (workers killed, their directories removed) runs to its end. One
    that comes after the command (while the process exits) is remembered: exit 130."""
    if _CTRL_C["pressed"]:
        return
    _CTRL_C["pressed"] = True
    if _CTRL_C["running"]:
        raise KeyboardInterrupt


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run one command; its exit code (130 after Ctrl-C)."""
    args = parser(prog).parse_args(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGINT, _interrupt) if main_thread else None
    _CTRL_C.update(running=True, pressed=False)
    try:
        return _run(args)
    finally:
        _CTRL_C["running"] = False
        # The workers' fork servers end here, not in an exit handler that a Ctrl-C
        # arriving during the interpreter's exit could cut short.
        if "hf_eval.isolation.spawner" in sys.modules:
            sys.modules["hf_eval.isolation.spawner"].close_all()
        if main_thread:
            signal.signal(signal.SIGINT, before)


def entry(prog: str | None = None) -> None:
    """The program (``hf-eval``, ``python -m hf_eval``): :func:`main`, then exit with its
    code, or 130 if Ctrl-C came at any point, however late."""
    signal.signal(signal.SIGINT, _interrupt)  # for the process's life
    code = main(prog=prog)
    # Every worker and fork server has ended (main's clean-up). The interpreter's own
    # teardown is skipped: it resets Ctrl-C to the default, which would end the process
    # by the signal instead of with a code.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(130 if _CTRL_C["pressed"] else code)


def _run(args: argparse.Namespace) -> int:
    try:
        if args.root is None:
            args.root = discover_root()
        return args.func(args)
    except DataError as err:
        from hf_eval.judge.report import safe_text

        print(f"error: {safe_text(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `list ... | head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (no flush error at exit)
        return 0
    except OSError as err:  # the machine's refusal (a full disk, a permission): one line
        from hf_eval.judge.report import safe_text

        where = f"{err.filename}: " if err.filename else ""
        print(f"error: {safe_text(where + (err.strerror or str(err)))}", file=sys.stderr)
        return 2
