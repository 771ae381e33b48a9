"""Value rules of the sparse MLA prefill family that shapes and dtypes cannot express.

Positions at or after a query's ``topk_length`` are ignored by the contract (the engine's
index buffer may hold stale rows there), so only the leading positions are range-checked.
"""

from __future__ import annotations

import math

import torch


def _first(mask: torch.Tensor) -> str:
    """Position of the first True element of ``mask``, for a message."""
    return str(tuple(int(i) for i in mask.nonzero()[0].tolist()))


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a sparse MLA workload; empty when valid."""
    problems = []
    indices = inputs["indices"].to(torch.int64)
    lengths = inputs["topk_length"].to(torch.int64)
    rows = inputs["KV"].shape[0]
    topk = indices.shape[1]

    bad = (lengths < 0) | (lengths > topk)
    if bool(bad.any()):
        problems.append(f"topk_length: every entry must be within [0, {topk}]; "
                        f"{int(bad.sum())} are not, first at {_first(bad)} = "
                        f"{int(lengths[bad][0])}")

    position = torch.arange(topk, device=indices.device)
    leading = position[None, :] < lengths.clamp(0, topk)[:, None]
    bad = leading & (indices != -1) & ((indices < 0) | (indices >= rows))
    if bool(bad.any()):
        problems.append(
            f"indices: every entry before topk_length must be -1 (unused) or a KV row in "
            f"[0, {rows}); {int(bad.sum())} are not, first at {_first(bad)} = "
            f"{int(indices[bad][0])}")

    sink = inputs["attn_sink"].to(torch.float32)
    bad = torch.isnan(sink) | (sink == math.inf)
    if bool(bad.any()):
        problems.append(f"attn_sink: every entry must be a finite logit or -inf (no sink); "
                        f"head {_first(bad)} is {float(sink[bad][0])}")
    scale = float(inputs["sm_scale"])
    if not (math.isfinite(scale) and scale > 0):
        problems.append(f"sm_scale: must be finite and positive, got {scale}")
    return problems
