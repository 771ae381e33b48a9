"""The dense_attention family (LTX-2.5 video h32_d128, audio h32_d64).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params: ``{"B", "Nq", "Nk"}`` (self attention has Nq == Nk, cross attention not) and
optional ``"qk_std"`` (default 1.0): the overall magnitude of Q and K. Logits scale with
``qk_std**2``; ``qk_std`` of about 2.5 gives a peaky, nearly one-hot softmax, which
exposes kernels that lose precision in the exponent or the running maximum.

Values imitate the model rather than i.i.d. unit noise: LTX RMS-normalises Q and K with
learned per-channel gains, keys carry a per-head mean direction, heads differ in
sharpness, and values have per-channel offsets, so outputs are not near zero and a
kernel with the wrong scale, layout or normalisation misses the tolerance. Each input
comes from its own PCG64 stream (``rng(definition, seed, name)``). There are no layer
weights in this family, hence nothing is drawn independently of the case seed.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Dense attention has no index or layout inputs, so the only value rule is that Q, K and V
are finite: a NaN or infinity makes the reference's output non-finite, and the published
acceptance fails every candidate on such a workload.
"""

from __future__ import annotations

import torch

from hf_eval.data.schema import Definition
from hf_eval.families.base import Family, Inputs, NoStructure
from hf_eval.families.common import attention_activations, finite_problems, randn


def generate(definition: Definition, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed);
    heads and head dimension are the definition's constant axes H and D."""
    if definition.op_type != "dense_attention":
        raise ValueError(f"{definition.name!r} is not a dense_attention definition")
    heads, dim = definition.const_axes["H"], definition.const_axes["D"]
    batch, nq, nk = int(params["B"]), int(params["Nq"]), int(params["Nk"])
    qk_std = float(params.get("qk_std", 1.0))
    return attention_activations(definition.name, seed, ("Q", "K", "V"), (nq, nk, nk), batch,
                                 qk_std, heads, dim)


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a dense attention workload; empty when valid."""
    return finite_problems(inputs, ("Q", "K", "V"))


# ------------------------------------------------------------------ benchmark shapes (device)
def bench_inputs(d: Definition, axes: dict[str, int], s: NoStructure, gen: torch.Generator,
                 dev: str) -> Inputs:
    """Q, K and V of one benchmark shape."""
    b, h, dd = axes["B"], d.const_axes["H"], d.const_axes["D"]
    return {"Q": randn(gen, (b, axes["Nq"], h, dd), device=dev),
            "K": randn(gen, (b, axes["Nk"], h, dd), device=dev),
            "V": randn(gen, (b, axes["Nk"], h, dd), device=dev)}


FAMILY = Family(op_type="dense_attention", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs)
