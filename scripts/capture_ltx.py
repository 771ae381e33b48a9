"""Capture the attention calls of an LTX video program as workloads, or replay them: the
published LTX capture, done by ``hf_eval``.

  --output-root ROOT [--propose] [--max-calls N] PROGRAM [ARGS ...]
      hf-eval --root ROOT capture --ops sdpa PROGRAM ARGS: runs PROGRAM (a Python file
      that runs the LTX pipeline, on whatever device it chooses) in this process, and
      every F.scaled_dot_product_attention call whose shapes and constants match a
      definition of ROOT (noncausal dense attention, say) becomes a workload with its
      tensors, the engine's own output (expected_output) and a receipt; the program's
      results never change. An all-visible mask is dropped; a call whose mask hides a
      key matches only a definition of that mask kind (a mask-free one never).
  --replay-root ROOT [--replay-definition NAME ...] [--device DEV]
      hf-eval --root ROOT replay, as capture_inputs.py --replay-root.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import _harness
from capture_inputs import replay

PROG = "capture_ltx.py"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output-root", type=Path, help="the dataset root the capture writes into")
    p.add_argument("--propose", action="store_true",
                   help="also propose (and write) a per-shape definition for each call "
                   "that matches none")
    p.add_argument("--max-calls", type=int, default=32,
                   help="workloads written per definition (default 32)")
    p.add_argument("--replay-root", type=Path, help="replay the captures of this dataset root")
    p.add_argument("--replay-definition", action="append", metavar="NAME",
                   help="replay only these definitions; repeatable (default: every one)")
    p.add_argument("--device", default="cuda",
                   help="where the replay runs the references: cuda (the default), "
                   "cuda:N or cpu")
    p.add_argument("program", type=Path, nargs="?", help="the LTX program to capture")
    p.add_argument("program_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.replay_root is None and (args.program is None or args.output_root is None):
        p.error("a capture needs --output-root and PROGRAM (or give --replay-root)")
    if args.max_calls < 1:
        p.error("--max-calls must be at least 1")
    _harness.use_clone()
    if args.replay_root is not None:
        return replay(args.replay_root, args.replay_definition, args.device)
    if not args.program.is_file():
        return _harness.error(f"{args.program}: no such program")
    argv = ["--root", args.output_root.resolve(), "capture", "--ops", "sdpa",
            "--program", args.program.name, "--max-calls", args.max_calls]
    if args.propose:
        argv.append("--propose")
    return _harness.run_harness([*argv, args.program.resolve(), *args.program_args], PROG)


if __name__ == "__main__":
    sys.exit(main())
