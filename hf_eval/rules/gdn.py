"""Value rules of the gdn family (gated delta rule decode and prefill) beyond shapes and dtypes.

- ``cu_seqlens`` (prefill) must partition the packed tokens: start at 0, never decrease
  (equal neighbours are allowed: an empty sequence) and end at total_seq_len, the length
  of q. Anything else makes sequences overlap or tokens belong to no sequence.
- ``scale`` must be finite and >= 0: 0 is the contract's spelling of "the default
  128**-0.5" (FlashInfer Trace scalars cannot be None); a negative scale is no model's.
- Every floating-point tensor must be finite: a NaN or infinity in the inputs makes the
  reference's output non-finite, and the published acceptance then fails every candidate.
"""

from __future__ import annotations

import math

import torch

from hf_eval.rules.common import finite_problems

FLOAT_INPUTS = ("q", "k", "v", "state", "A_log", "a", "dt_bias", "b")


def scale_problems(scale: object) -> list[str]:
    """The scalar ``scale`` must be a finite number >= 0 (0 means 128**-0.5)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        return [f"scale: must be a number (0 means 128**-0.5), not {type(scale).__name__}"]
    if not math.isfinite(scale) or scale < 0:
        return [f"scale: must be finite and >= 0 (0 means 128**-0.5); got {scale}"]
    return []


def cu_seqlens_problems(cu_seqlens: torch.Tensor, total_seq_len: int) -> list[str]:
    """``cu_seqlens`` must start at 0, be non-decreasing and end at total_seq_len."""
    values = cu_seqlens.detach().to(device="cpu", dtype=torch.int64).flatten()
    if values.numel() == 0:
        return ["cu_seqlens: must hold num_seqs + 1 >= 2 boundaries; it is empty"]
    problems = []
    if int(values[0]) != 0:
        problems.append(f"cu_seqlens: must start at 0; cu_seqlens[0] = {int(values[0])}")
    drops = (values[1:] < values[:-1]).nonzero().flatten()
    if drops.numel() > 0:
        i = int(drops[0])
        problems.append(f"cu_seqlens: must be non-decreasing (sequence lengths >= 0); "
                        f"{drops.numel()} decreases, first cu_seqlens[{i + 1}] = "
                        f"{int(values[i + 1])} < cu_seqlens[{i}] = {int(values[i])}")
    if int(values[-1]) != total_seq_len:
        problems.append(f"cu_seqlens: must end at total_seq_len = {total_seq_len} (the length "
                        f"of q); cu_seqlens[-1] = {int(values[-1])}")
    return problems


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a gdn workload; empty when valid."""
    problems = finite_problems(inputs, FLOAT_INPUTS)
    if "scale" in inputs:
        problems += scale_problems(inputs["scale"])
    cu_seqlens, q = inputs.get("cu_seqlens"), inputs.get("q")
    if isinstance(cu_seqlens, torch.Tensor) and isinstance(q, torch.Tensor):
        problems += cu_seqlens_problems(cu_seqlens, int(q.shape[0]))
    return problems
