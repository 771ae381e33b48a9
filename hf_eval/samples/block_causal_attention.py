"""Sample generator of the block_causal_attention family (Qwen-Image 2.1 turbo).

Two definitions share this module:

- ``prefix_cached_block_causal_h32_d128``: params ``{"B", "Nq", "Np"}`` and optional
  ``"qk_std"``; inputs ``Q, K_prefix, V_prefix, K_current, V_current``.
- ``prefix_cached_block_causal_h32_d128_prefix0``: params ``{"B", "segments"}`` where
  ``segments`` is a list of ``["text", n]`` / ``["image", n]`` runs in sequence order
  (Nq is their total length), and optional ``"qk_std"``; inputs
  ``Q, K_current, V_current, image_ids``. Image blocks get IDs 0, 1, 2, ... in order, so
  two adjacent image runs are two distinct blocks; text tokens get -1.

Values imitate the model rather than being i.i.d. unit noise, so that a kernel with the
wrong mask, scale or prefix handling misses the tolerance: Qwen-Image RMS-normalises Q and
K per head with learned per-channel gains, keys carry a per-head mean direction, some
heads are sharper than others, and values have per-channel offsets. Each input is drawn
from its own PCG64 stream (``rng(definition, seed, name)``), so changing one input's
shape never changes another's values. There are no layer weights in this family, hence
nothing is drawn independently of the case seed.
"""

from __future__ import annotations

import numpy as np
import torch

from hf_eval.samples.common import normal, rng

PREFIX = "prefix_cached_block_causal_h32_d128"
PREFIX0 = "prefix_cached_block_causal_h32_d128_prefix0"
HEADS = 32
HEAD_DIM = 128


#: What a generator returns: every input of the definition by name.
Inputs = dict[str, torch.Tensor | int | float | bool]


def _activations(definition: str, seed: int, names: tuple[str, ...], lengths: tuple[int, ...],
                 batch: int, qk_std: float) -> dict[str, torch.Tensor]:
    """Q/K/V-like bf16 tensors ``[batch, length, HEADS, HEAD_DIM]`` with model-like structure.

    Names starting with ``Q`` are queries, ``K`` keys, ``V`` values. Per-head temperatures
    and per-channel gains are drawn once per case (stream ``"head_structure"``) and shared
    by all keys of the case (prefix and current keys come from the same layer).
    """
    structure = rng(definition, seed, "head_structure")
    head_temp = structure.uniform(0.7, 1.5, size=(HEADS, 1)).astype(np.float32)
    q_gain = structure.uniform(0.6, 1.4, size=(HEADS, HEAD_DIM)).astype(np.float32)
    k_gain = structure.uniform(0.6, 1.4, size=(HEADS, HEAD_DIM)).astype(np.float32)
    k_mean = structure.normal(0.0, 0.4, size=(HEADS, HEAD_DIM)).astype(np.float32)
    v_gain = structure.uniform(0.5, 1.5, size=(HEADS, HEAD_DIM)).astype(np.float32)
    v_mean = structure.normal(0.0, 0.3, size=(HEADS, HEAD_DIM)).astype(np.float32)
    out: dict[str, torch.Tensor] = {}
    for name, length in zip(names, lengths, strict=True):
        noise = normal(rng(definition, seed, name), (batch, length, HEADS, HEAD_DIM),
                       dtype=torch.float32)
        if name.startswith("Q"):
            values = noise * torch.from_numpy(q_gain * head_temp * np.float32(qk_std))
        elif name.startswith("K"):
            values = (noise * torch.from_numpy(k_gain) + torch.from_numpy(k_mean)) * qk_std
        else:
            values = noise * torch.from_numpy(v_gain) + torch.from_numpy(v_mean)
        out[name] = values.to(torch.bfloat16)
    return out


def image_ids_from_segments(segments: list[list[object]]) -> torch.Tensor:
    """``[Nq]`` int32 IDs from ``[["text", n], ["image", n], ...]``: text -1, images 0, 1, ..."""
    ids: list[int] = []
    next_image = 0
    for kind, length in segments:
        if kind == "text":
            ids.extend([-1] * int(length))
        elif kind == "image":
            ids.extend([next_image] * int(length))
            next_image += 1
        else:
            raise ValueError(f"segment kind must be 'text' or 'image', got {kind!r}")
    if not ids:
        raise ValueError("segments must cover at least one token")
    return torch.tensor(ids, dtype=torch.int32)


def generate(definition: str, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    batch = int(params["B"])
    qk_std = float(params.get("qk_std", 1.0))
    if definition == PREFIX:
        nq, np_ = int(params["Nq"]), int(params["Np"])
        names = ("Q", "K_prefix", "V_prefix", "K_current", "V_current")
        return dict(_activations(definition, seed, names, (nq, np_, np_, nq, nq), batch, qk_std))
    if definition == PREFIX0:
        image_ids = image_ids_from_segments(params["segments"])
        nq = int(image_ids.shape[0])
        names = ("Q", "K_current", "V_current")
        inputs: Inputs = dict(
            _activations(definition, seed, names, (nq, nq, nq), batch, qk_std))
        inputs["image_ids"] = image_ids
        return inputs
    raise ValueError(f"{definition!r} is not a block_causal_attention definition")
