"""Run one solution at one benchmark shape in this process, for Nsight Compute (the goals' "why").

Not a benchmark and not a verdict: no worker, no checks, no fresh content. It only replays
the solution's prepared launch on the shape's generated inputs, so that ``ncu`` can read
what its kernels do (tensor-pipe and DRAM use, occupancy). The notes' reasons for the NA
and QSA goals come from counting each kernel's work from its constants; this turns them
into measurements. The profiled range is the last ``--calls`` launches, after warm-ups
outside it (``ncu --profile-from-start off``):

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy \\
        python3 results/h200/tools/profile_kernels.py DEFINITION SOLUTION SHAPE
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from hf_eval.bench.run import chosen_shapes
from hf_eval.bench.shapes import generate
from hf_eval.data.sources import load_entry
from hf_eval.dataset import open_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("definition")
    parser.add_argument("solution")
    parser.add_argument("shape", help="a benchmark shape label of the definition")
    parser.add_argument("--calls", type=int, default=2, help="launches inside the profiled range")
    args = parser.parse_args()
    dataset = open_dataset(Path(__file__).resolve().parents[3])
    definition = dataset.definition(args.definition)
    shapes = chosen_shapes(definition, [args.shape])
    if not shapes:
        raise SystemExit(f"{args.shape}: no benchmark shape of {args.definition}")
    inputs = generate(definition, shapes[0], "cuda")
    entry = load_entry(dataset.solution(args.solution))
    launch = entry.prepare(*inputs) if entry.prepare else (lambda: entry.run(*inputs))
    with torch.no_grad():
        for _ in range(3):  # compile and warm up outside the profiled range
            launch()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for _ in range(args.calls):
            launch()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled {args.calls} launches of {args.solution} at {args.shape}")


if __name__ == "__main__":
    main()
