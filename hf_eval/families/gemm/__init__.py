"""The gemm family (Qwen-Image dense bias-free linear layers, BF16 NT).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params: ``{"M"}``, the number of rows (the engine flattens batch and sequence into M).

Activations are N(0, 1) and the weight is N(0, std = 1/sqrt(K)), so every output element
is a sum of K terms with variance 1/K each: C is O(1), well above the BF16 atol of 0.005,
and a kernel that drops a K slice, transposes W or accumulates in BF16 misses the
tolerance. The weight is the layer's: it is drawn from ``rng(definition, "W")``,
independent of the case seed, so all workloads of a definition share one stored copy
(100 MB for the 12288 x 4096 shapes; drawn again when read rather than committed).

**Value rules** (what the checker adds to shapes, dtypes and constraints):

A dense GEMM has no index or layout inputs, so the only value rule is that A and W are
finite: a NaN or infinity makes the reference's output non-finite, and the published
acceptance then fails every candidate on that workload.
"""

from __future__ import annotations

import math

import torch

from hf_eval.data.schema import Definition
from hf_eval.families.base import Family, Inputs, NoStructure
from hf_eval.families.common import finite_problems, normal, randn, rng


def generate(definition: Definition, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed);
    N and K are the definition's constant axes."""
    if definition.op_type != "gemm":
        raise ValueError(f"{definition.name!r} is not a gemm definition")
    name, n, k = definition.name, definition.const_axes["N"], definition.const_axes["K"]
    m = int(params["M"])
    if m < 1:
        raise ValueError("M must be >= 1")
    a = normal(rng(name, seed, "A"), (m, k))
    w = normal(rng(name, "W"), (n, k), std=1.0 / math.sqrt(k))
    return {"A": a, "W": w}


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a gemm workload; empty when valid."""
    return finite_problems(inputs, ("A", "W"))


# ------------------------------------------------------------------ benchmark shapes (device)
def bench_inputs(d: Definition, axes: dict[str, int], s: NoStructure, gen: torch.Generator,
                 dev: str) -> Inputs:
    """A and W of one benchmark shape (W scaled like a layer's weight)."""
    m, n, k = axes["M"], d.const_axes["N"], d.const_axes["K"]
    return {"A": randn(gen, (m, k), device=dev), "W": randn(gen, (n, k), 0.02, device=dev)}


FAMILY = Family(op_type="gemm", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs)
