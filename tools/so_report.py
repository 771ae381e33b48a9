"""Report the shared objects of kernel wheels: sizes, GPU architectures, torch ABI fit.

Why: whether an engine path can run on the H200 depends on more than its source: the
compiled wheel must hold sm_90 code and must load under the device's torch (2.11.0), while
the wheel may be built against another torch. This reads wheels offline, without a GPU:

    python tools/so_report.py KERNEL.whl [...] --torch TORCH.whl [...]

For every ``.so`` of each kernel wheel it prints the size in the wheel (stored and
compressed), the payload of each architecture in its ``.nv_fatbin`` section (``sm_90``
means SASS for compute capability 9.0; ``ptx_*`` is PTX), and, for each torch wheel given,
how many of the ``.so``'s undefined torch/c10/aten/aoti symbols that torch's libraries do
not export (a non-zero count means the ``.so`` cannot be loaded with that torch). Needs
``nm`` (binutils); everything else is the standard library.
"""

from __future__ import annotations

import argparse
import collections
import struct
import subprocess
import tempfile
import zipfile
from pathlib import Path

FATBIN_MAGIC = 0xBA55ED50
TORCH_LIBS = ("libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so",
              "libtorch_cuda.so", "libtorch_python.so")


def elf_section(data: bytes, name: str) -> bytes:
    """The bytes of one section of a 64-bit little-endian ELF file (empty if absent)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i: int) -> tuple:
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)

    names = header(shstrndx)[4]
    for i in range(shnum):
        h = header(i)
        start = names + h[0]
        if data[start:data.index(b"\0", start)].decode() == name:
            return data[h[4]:h[4] + h[5]]
    return b""


def fatbin_archs(blob: bytes) -> dict[str, int]:
    """Payload bytes per architecture over every fatbin container in ``blob``."""
    out: collections.Counter[str] = collections.Counter()
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8
            continue
        entry, end = pos + header_size, pos + header_size + fat_size
        while entry + 32 <= end:
            kind, _unused, entry_header, size = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            out[f"{'ptx' if kind == 1 else 'sm'}_{arch}"] += size
            entry += entry_header + size
        pos = end
    return dict(sorted(out.items()))


def nm(path: Path, *flags: str) -> set[str]:
    """Dynamic symbols of ``path`` (``nm -D`` with ``flags``), names only."""
    done = subprocess.run(["nm", "-D", *flags, str(path)], capture_output=True, text=True,
                          check=True)
    return {line.split()[-1].split("@")[0] for line in done.stdout.splitlines() if line.split()}


def torch_exports(wheel: Path, scratch: Path) -> set[str]:
    """Every dynamic symbol the torch wheel's core libraries define."""
    names: set[str] = set()
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("torch/lib/") and Path(member).name in TORCH_LIBS:
                names |= nm(Path(archive.extract(member, scratch)), "--defined-only")
    return names


def is_torch_symbol(name: str) -> bool:
    return name.startswith(("aoti_torch_", "torch_")) or any(
        tag in name for tag in ("3c10", "2at", "5torch"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", nargs="+", type=Path, help="kernel wheels to inspect")
    parser.add_argument("--torch", nargs="*", type=Path, default=[],
                        help="torch wheels to check the .so files' symbols against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        exports = {w.name: torch_exports(w, scratch / w.stem) for w in args.torch}
        for wheel in args.wheels:
            print(f"{wheel.name}: {wheel.stat().st_size:,} bytes")
            with zipfile.ZipFile(wheel) as archive:
                for info in archive.infolist():
                    if not info.filename.endswith(".so"):
                        continue
                    path = Path(archive.extract(info, scratch / wheel.stem))
                    archs = fatbin_archs(elf_section(path.read_bytes(), ".nv_fatbin"))
                    needed = {s for s in nm(path, "--undefined-only") if is_torch_symbol(s)}
                    fit = "; ".join(f"{name}: {len(needed - have)} torch symbols missing"
                                    for name, have in exports.items())
                    print(f"  {info.filename}: {info.file_size:,} bytes "
                          f"({info.compress_size:,} compressed); fatbin "
                          + (", ".join(f"{a} {n / 1e6:.1f} MB" for a, n in archs.items())
                             or "none")
                          + (f"; {fit}" if fit else ""))
                    path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
