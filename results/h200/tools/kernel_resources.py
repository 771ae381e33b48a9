"""Registers, spills and shared memory of the Triton solutions' kernels on sm_90a, no GPU.

Why: how many programs an H200 SM holds at once (occupancy) follows from a kernel's
registers per thread and shared memory, and Triton's ahead-of-time compile reports both on
any machine: its pipeline down to PTX, then the ptxas that Triton bundles (`-v`). The
kernels and launch configurations are those of tests/test_triton_compile.py (``KERNELS``,
by solution file stem). These are compile facts, not timings: they say why a kernel may be
latency-bound, never how fast it runs.

usage: PYTHONPATH=<a triton 3.6.0 install> python results/h200/tools/kernel_resources.py \
           STEM [STEM ...] [--stages N] [--aligned NAME,...]
       (STEM: family/solution, e.g. mixed_mla/triton_one_wave_mixed_mla_decode_h64)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# Compile, never interpret: must be set before the test module (and triton) is imported.
os.environ["TRITON_INTERPRET"] = "0"

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from tests.test_triton_compile import KERNELS  # noqa: E402


def load_module(stem: str, folder: Path):
    """The solution's main.py, written out of its JSON and imported."""
    solution = json.loads((ROOT / "solutions" / f"{stem}.json").read_text())
    for source in solution["sources"]:
        (folder / source["path"]).write_text(source["content"])
    spec = importlib.util.spec_from_file_location(stem.replace("/", "_"), folder / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def resources(module, name: str, signature: dict, constexprs: dict, warps: int,
              stages: int, aligned: set[str], folder: Path) -> str:
    """One kernel configuration's ptxas line: registers, spills, stack; and shared memory.

    As at a launch, every pointer argument is taken as 16-byte aligned (what Triton's
    launcher finds for a fresh torch allocation, and tells the compiler), and so is every
    integer argument named in ``aligned`` (a launch marks an integer that is a multiple of
    16): the compiler vectorises loads on that knowledge, which changes the register count.
    """
    fn = getattr(module, name)
    attrs = {(fn.arg_names.index(arg),): [["tt.divisibility", 16]]
             for arg, kind in signature.items() if kind.startswith("*") or arg in aligned}
    source = ASTSource(fn=fn,
                       signature={**signature, **{key: "constexpr" for key in constexprs}},
                       constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": warps, "num_stages": stages})
    ptx = folder / "kernel.ptx"
    ptx.write_text(compiled.asm["ptx"])
    done = subprocess.run([triton.knobs.nvidia.ptxas.path, "-arch=sm_90a", "-v", str(ptx),
                           "-o", str(folder / "kernel.cubin")], capture_output=True, text=True)
    used = re.search(r"Used (\d+) registers", done.stderr)
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", done.stderr)
    return (f"{used.group(1) if used else '?'} registers, "
            f"{spill.group(1) if spill else '?'}/{spill.group(2) if spill else '?'} bytes "
            f"spilled/reloaded, {compiled.metadata.shared} bytes shared memory")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stems", nargs="+", help="solution file stems (family/solution)")
    parser.add_argument("--stages", type=int, default=2, help="num_stages (default 2)")
    parser.add_argument("--aligned", default="",
                        help="integer arguments a launch passes as multiples of 16 "
                             "(comma-separated names, e.g. max_pages,width)")
    args = parser.parse_args(argv)
    for stem in args.stems:
        if stem not in KERNELS:
            raise SystemExit(f"{stem}: not in tests/test_triton_compile.py KERNELS")
        with tempfile.TemporaryDirectory() as tmp:
            module = load_module(stem, Path(tmp))
            for name, signature, constexprs, warps in KERNELS[stem]:
                line = resources(module, name, signature, constexprs, warps, args.stages,
                                 set(filter(None, args.aligned.split(","))), Path(tmp))
                print(f"{stem} {name} {json.dumps(constexprs)} warps={warps} "
                      f"stages={args.stages}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
