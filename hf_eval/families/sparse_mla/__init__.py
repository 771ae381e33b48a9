"""The sparse MLA prefill family (``sparse_mla``).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

The T queries are the last T tokens of an S-token sequence; query t may select among the
``S - T + t + 1`` tokens visible to it (causal), as the engine's top-k indexer does.

Case ``params``:
- ``T``, ``S``: queries and KV rows;
- ``topk_length`` (optional): one length per query; default ``min(topk, visible)``, i.e.
  every visible token is selected while fewer than topk are visible;
- ``holes`` (default 0.0): probability that a position inside the leading
  ``topk_length`` is -1 (unused positions are skipped wherever they are);
- ``stale_tail`` (default false): positions at and after ``topk_length`` hold in-range row
  numbers (stale data of the index buffer) instead of -1; the contract says they are
  ignored, so a kernel that reads them fails;
- ``duplicates`` (default 0): per query, that many leading positions repeat another
  leading position's row (each occurrence is one key in the contract);
- ``q_scale`` (default 1.0) and ``sm_scale`` (default DeepSeek's YaRN-scaled
  ``192**-0.5 * 1.36889**2``).

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Positions at or after a query's ``topk_length`` are ignored by the contract (the engine's
index buffer may hold stale rows there), so only the leading positions are range-checked.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs, NoStructure
from hf_eval.families.common import randn, rng, sink_and_scale, violation

LATENT_DIM = 512
ROPE_DIM = 64
HEADS = 64
TOPK = {"sparse_mla_prefill_h64_d512_k128": 128, "sparse_mla_prefill_h64_d512_k640": 640}
#: Range of the per-head sink logits: a few units below the log-sum-exp of topk logits, so
#: the sink takes a visible share of the mass (from well under 1 % to most of it).
SINK_RANGE = {"sparse_mla_prefill_h64_d512_k128": (1.5, 8.5),
              "sparse_mla_prefill_h64_d512_k640": (3.0, 11.0)}

#: DeepSeek-V3's softmax scale: qk_head_dim 192 with the YaRN mscale (0.1 ln 40 + 1) squared.
DEFAULT_SM_SCALE = 192 ** -0.5 * (0.1 * math.log(40.0) + 1.0) ** 2


def _kv_rows(definition: str, gen: np.random.Generator, rows: int) -> torch.Tensor:
    """``[rows, 576]`` bf16: RMS-normalised latents (per-channel gains, a few outliers), rope.

    The gains are a model property (the kv_norm weight), so they come from a stream that
    depends only on the definition.
    """
    weights = rng(definition, "latent_gain")
    gain = weights.lognormal(0.0, 0.35, size=LATENT_DIM).astype(np.float32)
    gain[weights.choice(LATENT_DIM, size=8, replace=False)] *= np.float32(4.0)
    rope_gain = weights.uniform(0.5, 1.5, size=ROPE_DIM).astype(np.float32)
    values = gen.standard_normal((rows, LATENT_DIM + ROPE_DIM), dtype=np.float32)
    values *= np.concatenate([gain, rope_gain])
    return torch.from_numpy(values).to(torch.bfloat16)


def _index_rows(gen: np.random.Generator, tokens: int, rows: int, topk: int,
                lengths: list[int], holes: float, stale_tail: bool,
                duplicates: int) -> torch.Tensor:
    """``[tokens, topk]`` int32 row indices, -1 for unused positions."""
    indices = np.full((tokens, topk), -1, dtype=np.int32)
    for t, length in enumerate(lengths):
        visible = rows - tokens + t + 1
        if not 0 <= length <= min(topk, visible):
            raise ValueError(f"query {t}: topk_length {length} exceeds min(topk, {visible})")
        chosen = gen.choice(visible, size=length, replace=False).astype(np.int32)
        if duplicates and length > 1:
            targets = gen.choice(length, size=min(duplicates, length - 1), replace=False)
            for target in targets:
                chosen[target] = chosen[(target + 1 + gen.integers(0, length - 1)) % length]
        if holes:
            chosen[gen.random(length) < holes] = -1
        indices[t, :length] = chosen
        if stale_tail:
            indices[t, length:] = gen.integers(0, rows, size=topk - length)
    return torch.from_numpy(indices)


def generate(definition: Definition, params: dict,
             seed: int) -> dict[str, torch.Tensor | int | float | bool]:
    """Inputs of one ``sparse_mla`` sample workload (see the module docstring for params)."""
    name = definition.name
    topk = TOPK[name]
    tokens, rows = int(params["T"]), int(params["S"])
    if rows < tokens:
        raise ValueError("S must be at least T: the queries are the last T of the S tokens")
    lengths = params.get("topk_length")
    if lengths is None:
        lengths = [min(topk, rows - tokens + t + 1) for t in range(tokens)]
    if len(lengths) != tokens:
        raise ValueError("topk_length needs one value per query")

    head_scale = rng(name, "q_head_scale").uniform(0.25, 0.8, size=HEADS).astype(np.float32)
    head_scale *= np.float32(params.get("q_scale", 1.0))
    q = rng(name, seed, "Q").standard_normal((tokens, HEADS, LATENT_DIM + ROPE_DIM),
                                             dtype=np.float32)
    q *= head_scale[None, :, None]

    indices = _index_rows(rng(name, seed, "indices"), tokens, rows, topk, list(lengths),
                          float(params.get("holes", 0.0)), bool(params.get("stale_tail", False)),
                          int(params.get("duplicates", 0)))
    low, high = SINK_RANGE[name]
    sink = rng(name, "attn_sink").uniform(low, high, size=HEADS).astype(np.float32)
    return {
        "Q": torch.from_numpy(q).to(torch.bfloat16),
        "KV": _kv_rows(name, rng(name, seed, "KV"), rows),
        "indices": indices,
        "topk_length": torch.tensor(lengths, dtype=torch.int32),
        "attn_sink": torch.from_numpy(sink),
        "sm_scale": float(params.get("sm_scale", DEFAULT_SM_SCALE)),
    }


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a sparse MLA workload; empty when valid."""
    problems = []
    indices = inputs["indices"].to(torch.int64)
    lengths = inputs["topk_length"].to(torch.int64)
    rows = inputs["KV"].shape[0]
    topk = indices.shape[1]

    problems += violation("topk_length", f"every entry must be within [0, {topk}]",
                          (lengths < 0) | (lengths > topk), lengths)

    position = torch.arange(topk, device=indices.device)
    leading = position[None, :] < lengths.clamp(0, topk)[:, None]
    bad = leading & (indices != -1) & ((indices < 0) | (indices >= rows))
    problems += violation("indices", f"every entry before topk_length must be -1 (unused) or "
                          f"a KV row in [0, {rows})", bad, indices)

    return problems + sink_and_scale(inputs)


# ------------------------------------------------------------------ benchmark shapes (device)
def bench_inputs(d: Definition, axes: dict[str, int], s: NoStructure, gen: torch.Generator,
                 dev: str) -> Inputs:
    """Every query selects top-k distinct rows (all valid), DeepSeek's softmax scale."""
    c = d.const_axes
    t, sk, topk = axes["T"], axes["S"], c["topk"]
    idx = torch.rand((t, sk), generator=gen, device=dev).argsort(dim=1)[:, :topk]
    return {"Q": randn(gen, (t, c["H"], c["D_qk"]), device=dev),
            "KV": randn(gen, (sk, c["D_qk"]), device=dev), "indices": idx.to(torch.int32),
            "topk_length": torch.full((t,), topk, dtype=torch.int32, device=dev),
            "attn_sink": torch.randn(c["H"], generator=gen, device=dev),
            "sm_scale": DEFAULT_SM_SCALE}


# ------------------------------------------------------------------ roofline counts
def valid(inputs: Inputs) -> int:
    """Valid indices before each query's topk_length, over every query."""
    idx = inputs["indices"]
    lengths = inputs["topk_length"].to(idx.device, torch.int64)
    within = torch.arange(idx.shape[1], device=idx.device)[None, :] < lengths[:, None]
    return int(((idx >= 0) & within).sum())


def structure_counts(d: Definition, axes: dict[str, int], s: NoStructure) -> dict[str, int]:
    """Every query of a benchmark shape selects a full top-k."""
    return {"valid": axes["T"] * d.const_axes["topk"]}


FAMILY = Family(op_type="sparse_mla", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, structure_counts=structure_counts,
                counts={"valid": Count(("indices", "topk_length"), valid)})
