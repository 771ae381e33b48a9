"""Where the FlashMLA mixed-MLA solution's time goes, and what it outputs for an empty row.

A measurement, not a verdict: at each benchmark shape of the mixed MLA definition (inputs
from `hf-eval bench`'s generator), `do_bench_cudagraph` of the whole call, of the repack
kernel (and of its FP8 programs alone), of FlashMLA alone (on caches repacked once, its
scheduling metadata kept or computed anew) and of the empty-row mask; then the call's
output against the reference on the b1 shape, and FlashMLA's output with every position of
the row unused (-1), before the mask and after. One JSON line each:

    python3 results/h200/tools/mla_flashmla_probe.py
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import triton
from triton.testing import do_bench_cudagraph

from hf_eval.bench.run import chosen_shapes
from hf_eval.bench.shapes import generate
from hf_eval.data.sources import compile_reference, load_entry
from hf_eval.dataset import open_dataset

NAME = "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512"
SOLUTION = "flashmla_sm90_repack_mixed_mla_h64"


def main() -> None:
    dataset = open_dataset(Path(__file__).resolve().parents[3])
    definition = dataset.definition(NAME)
    entry = load_entry(dataset.solution(SOLUTION))
    reference = compile_reference(definition)
    for shape in chosen_shapes(definition, None):
        probe(definition, entry, reference, shape)


def probe(definition, entry, reference, shape) -> None:
    """Time the parts at one shape (and at b1, check the output and an empty row)."""
    module = entry.module
    Q, KV8, KV4, i8, i4, sink, scale = generate(definition, shape, "cuda")
    rows, n8, n4 = Q.shape[0], i8.shape[1], i4.shape[1]
    launch = entry.prepare(Q, KV8, KV4, i8, i4, sink, scale)
    launch()
    torch.cuda.synchronize()
    c8 = torch.empty(rows * n8 * 656, dtype=torch.uint8, device="cuda")
    c4 = torch.empty(rows * n4 * 656, dtype=torch.uint8, device="cuda")
    x8 = torch.empty((rows, 1, n8), dtype=torch.int32, device="cuda")
    x4 = torch.empty((rows, 1, n4), dtype=torch.int32, device="cuda")
    kv8 = KV8.view(torch.int32)
    T = module.TOKENS
    blocks8, blocks4 = triton.cdiv(n8, T), triton.cdiv(n4, T)

    def repack(blocks=(blocks8 + blocks4)):
        module._repack[(rows, blocks)](kv8, i8, c8.view(torch.int32), x8, n8, KV4,
                                       KV4.view(torch.int32), i4, c4.view(torch.int16),
                                       c4.view(torch.int32), x4, n4, TOKENS=T,
                                       num_warps=module.WARPS)

    repack()
    q = Q.view(rows, 1, 64, 576)
    k8 = c8.view(-1, 64, 1, 656)
    k4 = c4.view(-1, 64, 1, 656)

    def flashmla(meta=None):
        meta = meta or module.get_mla_metadata()[0]
        module.flash_mla_with_kvcache(q, k8, None, None, 512, meta, softmax_scale=scale,
                                      is_fp8_kvcache=True, indices=x8, attn_sink=sink,
                                      extra_k_cache=k4, extra_indices_in_kvcache=x4,
                                      use_legacy=True, kv_format="V32")

    out = launch()

    def mask():
        empty = (i8.amax(1) < 0) & (i4.amax(1) < 0)
        out.masked_fill_(empty[:, None, None], 0)

    kept, _ = module.get_mla_metadata()
    flashmla(kept)
    times = {name: round(do_bench_cudagraph(fn, rep=50) * 1e3, 2)
             for name, fn in (("call", launch), ("repack", repack),
                              ("repack8", lambda: repack(blocks8)),
                              ("flashmla_kept_metadata", lambda: flashmla(kept)),
                              ("flashmla_new_metadata", flashmla), ("mask", mask))}
    print(json.dumps({"shape": shape.label, "us": times}), flush=True)
    if shape.label == "b1":
        want = reference(Q, KV8, KV4, i8, i4, sink, scale)
        got = launch()
        err = (got.float() - want.float()).abs()
        bad = err > 0.005 + 0.016 * want.float().abs()
        print(json.dumps({"shape": "b1", "max_abs_err": err.max().item(),
                          "outside_tolerance": int(bad.sum())}), flush=True)
        i8.fill_(-1)
        i4.fill_(-1)
        repack()
        meta, _ = module.get_mla_metadata()
        raw, lse = module.flash_mla_with_kvcache(
            q, k8, None, None, 512, meta, softmax_scale=scale, is_fp8_kvcache=True,
            indices=x8, attn_sink=sink, extra_k_cache=k4, extra_indices_in_kvcache=x4,
            use_legacy=True, kv_format="V32")
        print(json.dumps({"empty_row_raw": {"nan": int(raw.isnan().sum()),
                                            "nonzero": int((raw != 0).sum()),
                                            "lse": lse.flatten()[:4].tolist()},
                          "empty_row_call_nonzero": int((launch() != 0).sum())}),
              flush=True)


if __name__ == "__main__":
    main()
