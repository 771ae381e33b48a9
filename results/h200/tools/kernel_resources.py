"""Registers, spills, shared memory and loop instructions of the Triton solutions' kernels
on sm_90a, without a GPU.

Why: how many programs an H200 SM holds at once (occupancy) follows from a kernel's
registers per thread and shared memory, and Triton's ahead-of-time compile reports both on
any machine: its pipeline down to PTX, then the ptxas that Triton bundles (`-v`). For a
kernel bound by instruction issue, the instructions of its main loop, by class (integer,
floating point, tensor core, memory; the bundled nvdisasm reads the cubin), say where its
issue slots go. The kernels and launch configurations are those of
tests/test_triton_compile.py (``KERNELS``, by solution file stem). These are compile facts,
not timings: they say why a kernel may be slow, never how fast it runs.

usage: PYTHONPATH=<a triton 3.6.0 install> python results/h200/tools/kernel_resources.py \
           STEM [STEM ...] [--stages N] [--aligned NAME,...] [--loops]
       (STEM: family/solution, e.g. mixed_mla/triton_one_wave_mixed_mla_decode_h64)
"""

from __future__ import annotations

import argparse
import collections
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


#: SASS opcodes by the class of unit that issues them (the rest count as "other").
CLASSES = {
    "integer": {"IMAD", "IADD3", "VIADD", "ISETP", "LOP3", "SHF", "LEA", "IMNMX", "VIMNMX",
                "SEL", "IABS", "PRMT", "SGXT", "BMSK", "POPC", "FLO"},
    "float": {"FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "FSEL", "MUFU", "F2F", "F2FP", "I2F",
              "F2I", "HADD2", "HFMA2", "HMUL2"},
    "tensor": {"HMMA", "HGMMA", "IMMA", "QGMMA"},
    "memory": {"LDG", "STG", "LDS", "STS", "LDSM", "LDGSTS", "LDL", "STL", "ATOMS", "RED",
               "ATOM", "SYNCS", "UTMALDG"},
}


def loop_instructions(cubin: Path) -> list[str]:
    """Per loop of the cubin (a backward branch to a label), its instruction count by class."""
    sass = subprocess.run([str(Path(triton.knobs.nvidia.ptxas.path).with_name("nvdisasm")),
                           "-c", str(cubin)], capture_output=True, text=True).stdout.splitlines()
    labels = {m.group(1): i for i, line in enumerate(sass)
              if (m := re.match(r"\s*(\.L_x_\d+):", line))}
    loops = []
    for i, line in enumerate(sass):
        branch = re.search(r"BRA `\(?(\.L_x_\d+)", line)
        if not branch or labels.get(branch.group(1), i) >= i - 1:
            continue  # not a backward branch, or the branch-to-itself that ends a kernel
        ops = collections.Counter(
            m.group(1) for body in sass[labels[branch.group(1)]:i + 1]
            if (m := re.search(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", body)))
        by_class = {c: sum(ops[o] for o in names) for c, names in CLASSES.items()}
        by_class["other"] = sum(ops.values()) - sum(by_class.values())
        loops.append(f"loop of {sum(ops.values())} instructions: "
                     + ", ".join(f"{c} {n}" for c, n in by_class.items()))
    return loops


def resources(module, name: str, signature: dict, constexprs: dict, warps: int,
              stages: int, aligned: set[str], folder: Path, loops: bool = False) -> str:
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
    line = (f"{used.group(1) if used else '?'} registers, "
            f"{spill.group(1) if spill else '?'}/{spill.group(2) if spill else '?'} bytes "
            f"spilled/reloaded, {compiled.metadata.shared} bytes shared memory")
    if loops:
        cubin = folder / "kernel.triton.cubin"
        cubin.write_bytes(compiled.asm["cubin"])
        line += "".join(f"\n    {loop}" for loop in loop_instructions(cubin))
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stems", nargs="+", help="solution file stems (family/solution)")
    parser.add_argument("--stages", type=int, default=2, help="num_stages (default 2)")
    parser.add_argument("--aligned", default="",
                        help="integer arguments a launch passes as multiples of 16 "
                             "(comma-separated names, e.g. max_pages,width)")
    parser.add_argument("--loops", action="store_true",
                        help="also count each loop's instructions by class")
    args = parser.parse_args(argv)
    for stem in args.stems:
        if stem not in KERNELS:
            raise SystemExit(f"{stem}: not in tests/test_triton_compile.py KERNELS")
        with tempfile.TemporaryDirectory() as tmp:
            module = load_module(stem, Path(tmp))
            for name, signature, constexprs, warps in KERNELS[stem]:
                line = resources(module, name, signature, constexprs, warps, args.stages,
                                 set(filter(None, args.aligned.split(","))), Path(tmp),
                                 args.loops)
                print(f"{stem} {name} {json.dumps(constexprs)} warps={warps} "
                      f"stages={args.stages}: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
