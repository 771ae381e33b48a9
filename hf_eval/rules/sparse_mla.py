"""Value rules of the sparse MLA prefill family that shapes and dtypes cannot express.

Positions at or after a query's ``topk_length`` are ignored by the contract (the engine's
index buffer may hold stale rows there), so only the leading positions are range-checked.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import sink_and_scale, violation


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
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
