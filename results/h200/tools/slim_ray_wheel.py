"""Make Ray's wheel small enough to carry to the device (at most 64 MiB a call, the tree
included): ``python results/h200/tools/slim_ray_wheel.py WHEEL OUT_DIR``.

The ray 2.60.0 cp312 manylinux wheel is 79.3 MB. Left out, with their RECORD lines:
``ray/jars/`` (the Java worker, 32 MB), the dashboard's web client (the audit starts no
dashboard) and the Ray AI libraries that ``import ray`` and the core API never import
(data, train, tune, serve, rllib, llm, air, workflow). Everything else is copied
byte for byte, so what remains installs and runs as the original (the CPU tests run it:
``docs/ray.md``). The source wheel must be the one PyPI serves: its SHA-256 is checked
against the pinned value when the file name matches, and any other file is refused.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

#: sha256 of the wheels PyPI serves for ray 2.60.0 (pip download --no-deps ...).
PINNED = {
    "ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl":
        "b951b40965947a63615830916be04f26440d234de1e9a29dbf2155d03fa9ad2a",
    "ray-2.60.0-cp311-cp311-manylinux2014_x86_64.whl":
        "e227f6b2af8ab4626dd9a35a5860b33864325ea137383d57f854d4637ee3fea2",
}
DROPPED = ("ray/jars/", "ray/dashboard/client/", "ray/data/", "ray/train/", "ray/tune/",
           "ray/serve/", "ray/rllib/", "ray/llm/", "ray/air/", "ray/workflow/")


def slim(wheel: Path, out_dir: Path) -> Path:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if PINNED.get(wheel.name) != digest:
        raise SystemExit(f"{wheel}: not a pinned ray 2.60.0 wheel (sha256 {digest})")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED,
                                                        compresslevel=9) as dst:
        for info in src.infolist():
            if info.filename.startswith(DROPPED):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(line for line in lines
                               if not line.startswith(DROPPED)).encode()
            dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    made = slim(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{made}: {made.stat().st_size / 1e6:.1f} MB")
