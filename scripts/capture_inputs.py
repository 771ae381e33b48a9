"""Replay captured workloads, import captured data, or capture from a serving engine: the
published capture script's command line, done by ``hf_eval``.

  --replay-root ROOT [--replay-definition NAME ...] [--device DEV]
      hf-eval --root ROOT replay: each receipt's saved engine output (expected_output)
      judged against the definition's reference under the task's tolerance, the verdict
      recorded in the receipt (validation.replay); exit 1 when one fails, 2 when none of
      the selection has an engine output.
  --import-capture DIR --output-root ROOT
      hf-eval --root ROOT import-fib DIR: a FlashInfer Trace folder (definitions,
      workloads, tensors) imported into ROOT with a receipt per workload.
  --model-path MODEL --output-root ROOT [--port PORT]
      the capture from a running SGLang server. Not done here: it needs SGLang and a CUDA
      GPU, and SGLang runs the model in processes of its own, out of reach of the
      harness's in-process capture; the script says so in one line (exit 2). Capture a
      program that runs the model in its own process with 'hf-eval capture'.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import _harness

PROG = "capture_inputs.py"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-path", type=Path,
                   help="the served model (serving capture; refused here, see above)")
    p.add_argument("--output-root", type=Path,
                   help="the dataset root an import (or a capture) writes into")
    p.add_argument("--replay-root", type=Path, help="replay the captures of this dataset root")
    p.add_argument("--replay-definition", action="append", metavar="NAME",
                   help="replay only these definitions; repeatable (default: every one)")
    p.add_argument("--import-capture", type=Path, metavar="DIR",
                   help="import this FlashInfer Trace folder into --output-root")
    p.add_argument("--device", default="cuda",
                   help="where the replay runs the references: cuda (the default), "
                   "cuda:N or cpu")
    p.add_argument("--port", type=int, default=30000,
                   help="the serving capture's server port (default 30000; refused here)")
    return p


def serving_refusal() -> str:
    """Why the serving capture does not run on this machine, in one line."""
    missing = []
    if importlib.util.find_spec("sglang") is None:
        missing.append("no sglang module")
    import torch

    if not torch.cuda.is_available():
        missing.append("no usable CUDA device")
    if missing:
        return ("the serving capture needs SGLang and a CUDA GPU; this machine has "
                + " and ".join(missing) + " (replay with --replay-root and import with "
                "--import-capture work without them)")
    return ("the serving capture is not done by this harness: SGLang runs the model in "
            "processes of its own, which its in-process capture cannot see; capture a "
            "program that runs the model in its own process with 'hf-eval capture'")


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.import_capture and args.output_root is None:
        p.error("--import-capture needs --output-root")
    if not (args.import_capture or args.replay_root) and (
            args.model_path is None or args.output_root is None):
        p.error("the serving capture needs --model-path and --output-root "
                "(or give --replay-root or --import-capture)")
    _harness.use_clone()
    if args.import_capture:
        return _harness.run_harness(["--root", args.output_root.resolve(), "import-fib",
                                     args.import_capture.resolve()], PROG)
    if args.replay_root:
        return replay(args.replay_root, args.replay_definition, args.device)
    return _harness.error(serving_refusal())


def replay(root: Path, definitions: list[str] | None, device: str) -> int:
    """``hf-eval --root ROOT replay``, on a device this machine has."""
    from hf_eval.cli import _device_problem

    problem = _device_problem(device)
    if problem:
        return _harness.error(problem)
    argv = ["--root", root.resolve(), "replay", "--device", device]
    if definitions:
        argv += ["--definitions", ",".join(definitions)]
    return _harness.run_harness(argv, PROG)


if __name__ == "__main__":
    sys.exit(main())
