"""Value rules of the neighborhood_attention family that shapes and dtypes cannot express.

The window geometry needs T >= kt, Y >= ky and X >= kx, which the definitions state as
constraints over their axes (the checker evaluates those). Q, K and V carry no indices or
layouts, so the only value rule is that they are finite: a NaN or infinity makes the
reference's output non-finite, and the published acceptance fails every candidate on such a
workload.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import finite_problems


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a neighbourhood attention workload; [] if valid."""
    return finite_problems(inputs, ("Q", "K", "V"))
