"""Trim NATTEN 0.21.7's kernel instantiations to what this project's H200 solutions call.

Why: NATTEN's build has no switch that selects kernels beyond the CUDA architecture.
`NATTEN_CUDA_ARCH="9.0"` still builds every Ampere-style FNA/FMHA kernel (SM50 to SM80
variants, FP32/FP16/BF16, 1-D/2-D/3-D, every causal mask, forward and backward) and
adds the Hopper families: 109 compilation units with roughly 3,000 kernel
instantiations, the largest units (Hopper FNA backward, 73 kernels each) single-threaded
in nvcc for a long time and several GB each. That does not fit the device time of one
run (see docs/h200/natten.md for the measurement).

This script edits the unpacked sdist so that the kernel-instantiation generators
(scripts/autogen_*.py) emit only the 3-D, non-causal, BF16 kernels (head dim 64 for the
Hopper and reference families), and adds an autogen policy "trim" to setup.py whose
split counts fit the smaller kernel lists. The kernels that remain are instantiated
from the same templates with the same parameters as in the stock build; only the lists
the generators iterate over are shortened, and the generated dispatchers then raise a
clear "dispatch failed" error for anything else (FP16, other head dims, 1-D/2-D,
causal). What remains:

- Hopper FNA forward, 3-D, BF16, head dim 64, non-causal: both tile configurations NATTEN
  offers for that case (its default Q 4x4x4 / KV 4x4x8, and Q 4x4x4 / KV 2x8x8);
- Hopper FMHA forward BF16 head dim 64 (the path na3d takes when the kernel equals the
  volume: NATTEN then calls plain attention);
- the matching Hopper backward kernels and the Ampere-style (SM80) FNA and FMHA BF16
  kernels, 3-D only for FNA (so `backend="cutlass-fna"` stays available for comparison),
  and the reference kernels for 3-D non-causal (all dtypes);
- everything outside the generators (token permute, the torch bindings) unchanged.

Each edit inserts override lines before an anchor that must occur exactly once, so a
different sdist fails here with the file and anchor named instead of building
something else. Usage: python3 natten_trim.py <unpacked natten-0.21.7 directory>
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

EXPECTED_VERSION = '__version__ = "0.21.7"'
MARKER = "# inference-kernels trim"


@dataclass(frozen=True)
class Edit:
    """Insert `lines` (indented to the anchor) right before the single `anchor` in `path`."""

    path: str
    anchor: str
    lines: tuple[str, ...]


HOPPER_FNA = (
    "NA_DIMS = [3]",
    "SUPPORTED_DTYPES = [BFloat]",
    "HEAD_DIMS = [64]",
    "CAUSAL_MASKS = {3: [(False, False, False)]}",
)
HOPPER_FMHA = ("SUPPORTED_DTYPES = [BFloat]", "HEAD_DIMS = [64]")

EDITS = (
    Edit("scripts/autogen_hopper_fna.py", "    dtype_dispatchers = []\n", HOPPER_FNA),
    Edit("scripts/autogen_hopper_fna_bwd.py", "    dtype_dispatchers = []\n", HOPPER_FNA),
    Edit("scripts/autogen_hopper_fmha.py", "    head_dim_dispatchers = []\n", HOPPER_FMHA),
    Edit("scripts/autogen_hopper_fmha_bwd.py", "    head_dim_dispatchers = []\n", HOPPER_FMHA),
    Edit(
        "scripts/autogen_reference_fna.py",
        "    dtype_dispatchers = []\n",
        ("NA_DIMS = [3]", "CAUSAL_MASKS = {3: [(False, False, False)]}"),
    ),
    Edit(
        "scripts/autogen_fna.py",
        "    device_dispatchers = []\n",
        (
            "SUPPORTED_ARCHS = [80]",
            "CUDA_DTYPES = [NATTEN_BFloat]",
            "NA_RANKS = [3]",
            "CAUSAL_MASKS = {3: [[0, 0, 0]]}",
        ),
    ),
    Edit(
        "scripts/autogen_fmha.py",
        "    dtype_dispatchers = []\n",
        ("SUPPORTED_ARCHS = [80]", "CUDA_DTYPES = [NATTEN_BFloat]"),
    ),
    # The split counts of the "trim" policy: one compilation unit per kernel (per kernel
    # bundle for the Ampere-style families, whose generator groups all tile shapes of one
    # dtype and mask), since the build's wall time is its longest unit; never more units
    # than kernels (NATTEN's generators assert that no split is empty).
    Edit(
        "setup.py",
        '    "default": {\n',
        (
            '"trim": {',
            '    "reference": 2, "fna": 2, "fmha": 2,',
            '    "hopper-fna": 2, "hopper-fna-bwd": 4, "hopper-fmha": 1, "hopper-fmha-bwd": 2,',
            '    "blackwell-fna": 1, "blackwell-fna-bwd": 1,',
            '    "blackwell-fmha": 1, "blackwell-fmha-bwd": 1,',
            "},",
        ),
    ),
)


def apply(root: Path) -> None:
    """Apply every edit to the sdist at `root`; raise SystemExit naming what did not match."""
    version_file = root / "src/natten/version.py"
    if EXPECTED_VERSION not in version_file.read_text():
        raise SystemExit(f"{version_file}: expected {EXPECTED_VERSION!r}; "
                         "this trim is for 0.21.7 only")
    for edit in EDITS:
        path = root / edit.path
        text = path.read_text()
        if MARKER in text:
            raise SystemExit(f"{path}: already trimmed (found {MARKER!r}); unpack a fresh sdist")
        count = text.count(edit.anchor)
        if count != 1:
            raise SystemExit(f"{path}: anchor {edit.anchor.strip()!r} occurs {count} times, "
                             "expected 1")
        indent = edit.anchor[: len(edit.anchor) - len(edit.anchor.lstrip())]
        block = "".join(f"{indent}{line}\n" for line in (MARKER, *edit.lines))
        path.write_text(text.replace(edit.anchor, block + edit.anchor))
        print(f"trimmed {edit.path}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: natten_trim.py <unpacked natten-0.21.7 directory>")
    apply(Path(sys.argv[1]))
