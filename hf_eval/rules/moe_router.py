"""Value rules of the MoE router family that shapes and dtypes cannot express.

Non-finite hidden states, weights or biases make the selection undefined (NaN keys have
no order), and the weights must scale by a finite positive factor. Ties are *not* a
rule violation: the contract defines them (lower expert ID wins).
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import non_finite, positive_scale


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a router workload; empty when valid."""
    problems = []
    for name in ("X", "W", "bias_text", "bias_image"):
        problems += non_finite(name, inputs[name])
    return problems + positive_scale("routed_scale", inputs["routed_scale"])
