"""Smoke test of a freshly built NATTEN on the device: libnatten loads, and na3d on the GPU
matches each neighbourhood definition's own reference on a small volume with borders and on
a volume equal to the kernel (which NATTEN routes to plain attention).

Why here and not only in the audit: it runs right after the detached build, in the same
call, before any time is spent installing or auditing, and it names the backend NATTEN picks.
Run from the repository root (it reads definitions/); exit status 0 when every check passed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import natten
import torch
from natten._libnatten import HAS_LIBNATTEN
from natten.backends import choose_backend, choose_fmha_backend
from natten.functional import na3d

DEFINITIONS = sorted(Path("definitions/neighborhood_attention").glob("*.json"))
RTOL, ATOL = 0.016, 0.005  # the tasks' BF16 tolerance


def main() -> int:
    print(f"natten {natten.__version__} from {Path(natten.__file__).parent}, "
          f"libnatten {HAS_LIBNATTEN}")
    if not HAS_LIBNATTEN:
        # natten swallows the ImportError of its library; show it (e.g. an undefined symbol).
        try:
            from natten import libnatten  # noqa: F401
            reason = "natten.libnatten imports now"
        except ImportError as error:
            reason = f"{type(error).__name__}: {error}"
        print(f"smoke FAILED: natten imported without libnatten ({reason})")
        return 1
    if not torch.cuda.is_available():
        print("no CUDA device: import check only")
        return 0
    failures = 0
    for path in DEFINITIONS:
        definition = json.loads(path.read_text())
        namespace: dict = {}
        exec(definition["reference"], namespace)  # the definition's own reference
        kernel = (namespace["KT"], namespace["KY"], namespace["KX"])
        heads = definition["axes"]["H"]["value"]
        for volume in ((kernel[0] + 2, kernel[1] + 3, kernel[2] + 5), kernel):
            gen = torch.Generator(device="cuda").manual_seed(0)
            q, k, v = (torch.randn(1, *volume, heads, 64, device="cuda", dtype=torch.bfloat16,
                                   generator=gen) for _ in range(3))
            q = q * 0.125
            if volume == kernel:
                flat = q.flatten(1, 3)
                backend = "attention/" + choose_fmha_backend(flat, flat, flat, is_causal=False,
                                                             is_varlen=False, torch_compile=False)
            else:
                backend = choose_backend(q, k, v, torch_compile=False)
            out = na3d(q, k, v, kernel_size=kernel, scale=1.0)
            torch.cuda.synchronize()
            ref = namespace["run"](q, k, v)
            close = torch.isclose(out.float(), ref.float(), rtol=RTOL, atol=ATOL)
            ok = bool(close.all())
            failures += not ok
            print(f"smoke {'ok' if ok else 'FAILED'} {path.stem} volume {volume} backend {backend} "
                  f"max|diff| {(out.float() - ref.float()).abs().max().item():.3g} "
                  f"mismatched {int((~close).sum())}/{close.numel()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
