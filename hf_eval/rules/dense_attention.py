"""Value rules of the dense_attention family that shapes and dtypes cannot express.

Dense attention has no index or layout inputs, so the only value rule is that Q, K and V
are finite: a NaN or infinity makes the reference's output non-finite, and the published
acceptance fails every candidate on such a workload.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import finite_problems


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a dense attention workload; empty when valid."""
    return finite_problems(inputs, ("Q", "K", "V"))
