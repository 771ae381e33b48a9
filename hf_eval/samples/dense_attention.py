"""Sample generator of the dense_attention family (LTX-2.5 video h32_d128, audio h32_d64).

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
"""

from __future__ import annotations

import numpy as np
import torch

from hf_eval.samples.common import normal, rng

#: Constant axes (H, D) of each definition of the family.
SHAPES: dict[str, tuple[int, int]] = {
    "noncausal_dense_attention_h32_d128": (32, 128),
    "noncausal_dense_attention_h32_d64": (32, 64),
}


#: What a generator returns: every input of the definition by name.
Inputs = dict[str, torch.Tensor | int | float | bool]


def generate(definition: str, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    if definition not in SHAPES:
        raise ValueError(f"{definition!r} is not a dense_attention definition")
    heads, dim = SHAPES[definition]
    batch, nq, nk = int(params["B"]), int(params["Nq"]), int(params["Nk"])
    qk_std = np.float32(params.get("qk_std", 1.0))

    structure = rng(definition, seed, "head_structure")
    head_temp = structure.uniform(0.7, 1.5, size=(heads, 1)).astype(np.float32)
    q_gain = structure.uniform(0.6, 1.4, size=(heads, dim)).astype(np.float32)
    k_gain = structure.uniform(0.6, 1.4, size=(heads, dim)).astype(np.float32)
    k_mean = structure.normal(0.0, 0.4, size=(heads, dim)).astype(np.float32)
    v_gain = structure.uniform(0.5, 1.5, size=(heads, dim)).astype(np.float32)
    v_mean = structure.normal(0.0, 0.3, size=(heads, dim)).astype(np.float32)

    def draw(name: str, length: int) -> torch.Tensor:
        return normal(rng(definition, seed, name), (batch, length, heads, dim),
                      dtype=torch.float32)

    q = draw("Q", nq) * torch.from_numpy(q_gain * head_temp * qk_std)
    k = (draw("K", nk) * torch.from_numpy(k_gain) + torch.from_numpy(k_mean)) * float(qk_std)
    v = draw("V", nk) * torch.from_numpy(v_gain) + torch.from_numpy(v_mean)
    return {"Q": q.to(torch.bfloat16), "K": k.to(torch.bfloat16), "V": v.to(torch.bfloat16)}
