"""What a candidate's first call costs in a fresh CUDA process, and what a warm-up that
runs no candidate code takes off it (device machine, repository root):

    python3 results/h200/tools/first_call.py > first_call.jsonl

Each variant runs in a new interpreter: CUDA taken (``torch.zeros``), then an optional
warm-up, then the dense d64 dev cases' SDPA calls (the shapes of
``noncausal_dense_attention_h32_d64``'s dev workloads, random BF16 inputs) in order,
each timed on the host around a synchronised call, first and second time. Variants:
``bare`` (no warm-up), ``blas`` (a BF16 matmul and an addmm: cuBLAS and cuBLASLt
handles), ``blas_dnn`` (also a cuDNN convolution), ``blas_dnn_sdpa`` (also one SDPA call
of another shape, B1 H8 N128 D128). One JSON line per variant."""

from __future__ import annotations

import json
import subprocess
import sys
import time

CASES = [(2, 50, 31), (1, 64, 96), (1, 1, 64)]  # (B, Nq, Nk), H 32, D 64
VARIANTS = ["bare", "blas", "blas_dnn", "blas_dnn_sdpa"]


def child(variant: str) -> dict:
    import torch
    import torch.nn.functional as F

    t0 = time.perf_counter()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    out = {"variant": variant, "cuda_init_ms": (time.perf_counter() - t0) * 1e3}
    t0 = time.perf_counter()
    if variant != "bare":
        a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        a @ a
        torch.addmm(a, a, a)
    if "dnn" in variant:
        x = torch.randn(1, 8, 16, 16, device="cuda", dtype=torch.bfloat16)
        torch.nn.functional.conv2d(x, torch.randn(8, 8, 3, 3, device="cuda",
                                                  dtype=torch.bfloat16))
    if "sdpa" in variant:
        q = torch.randn(1, 8, 128, 128, device="cuda", dtype=torch.bfloat16)
        F.scaled_dot_product_attention(q, q, q)
    torch.cuda.synchronize()
    out["warm_ms"] = (time.perf_counter() - t0) * 1e3
    calls = []
    for b, nq, nk in CASES:
        q = torch.randn(b, nq, 32, 64, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        k = torch.randn(b, nk, 32, 64, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        v = torch.randn(b, nk, 32, 64, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        times = []
        for _ in range(2):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            F.scaled_dot_product_attention(q, k, v, scale=0.125).transpose(1, 2).contiguous()
            torch.cuda.synchronize()
            times.append(round((time.perf_counter() - t0) * 1e3, 3))
        choice = int(torch._fused_sdp_choice(q, k, v, scale=0.125))
        calls.append({"case": [b, nq, nk], "first_ms": times[0], "second_ms": times[1],
                      "backend": choice})
    out["calls"] = calls
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(child(sys.argv[1])))
    else:
        for variant in VARIANTS:
            for _ in range(2):
                done = subprocess.run([sys.executable, __file__, variant],
                                      capture_output=True, text=True)
                print(done.stdout.strip() or json.dumps(
                    {"variant": variant, "error": done.stderr[-400:]}), flush=True)
