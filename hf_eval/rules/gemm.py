"""Value rules of the gemm family (dense BF16 NT linear layers) beyond shapes and dtypes.

A dense GEMM has no index or layout inputs, so the only value rule is that A and W are
finite: a NaN or infinity makes the reference's output non-finite, and the published
acceptance then fails every candidate on that workload.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import finite_problems


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a gemm workload; empty when valid."""
    return finite_problems(inputs, ("A", "W"))
