"""Value rules of the MoE router family that shapes and dtypes cannot express.

Non-finite hidden states, weights or biases make the selection undefined (NaN keys have
no order), and the weights must scale by a finite positive factor. Ties are *not* a
rule violation: the contract defines them (lower expert ID wins).
"""

from __future__ import annotations

import math

import torch


def _first(mask: torch.Tensor) -> str:
    """Position of the first True element of ``mask``, for a message."""
    return str(tuple(int(i) for i in mask.nonzero()[0].tolist()))


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a router workload; empty when valid."""
    problems = []
    for name in ("X", "W", "bias_text", "bias_image"):
        bad = ~torch.isfinite(inputs[name])
        if bool(bad.any()):
            problems.append(f"{name}: every value must be finite; {int(bad.sum())} are not, "
                            f"first at {_first(bad)}")
    scale = float(inputs["routed_scale"])
    if not (math.isfinite(scale) and scale > 0):
        problems.append(f"routed_scale: must be finite and positive, got {scale}")
    return problems
