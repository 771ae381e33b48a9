"""The neighborhood_attention family (LTX-2.5 video VAE decoder, 3-D NATTEN).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params: ``{"B", "T", "Y", "X"}``: batch and the frames x height x width volume; each of T, Y,
X must be at least the definition's kernel size in that dimension.

Values imitate decoder feature maps rather than i.i.d. unit noise: every token is a smooth
spatio-temporal field (a few random low-frequency plane waves mixed into the channels) plus
per-token noise, so neighbouring tokens are correlated as in an image, and values carry
per-channel gains and offsets so outputs are not near zero. Q arrives pre-scaled (the
definitions' scale is 1.0), with a per-head sharpness that puts the logits' standard deviation
between about 1 and 3: softmax weights then spread over several keys of the window without
being uniform, so a kernel that drops, duplicates or shifts window keys misses the tolerance.
Each input comes from its own PCG64 stream (``rng(definition, seed, name)``); the per-head
sharpness and channel gains are properties of the layer and come from
``rng(definition, "head_structure")``, independent of the case seed. There are no weight
tensors in this family.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

The window geometry needs T >= kt, Y >= ky and X >= kx, which the definitions state as
constraints over their axes (the checker evaluates those). Q, K and V carry no indices or
layouts, so the only value rule is that they are finite: a NaN or infinity makes the
reference's output non-finite, and the published acceptance fails every candidate on such a
workload.
"""

from __future__ import annotations

import numpy as np
import torch

from hf_eval.data.schema import Definition
from hf_eval.families.base import Family, Inputs, NoStructure
from hf_eval.families.common import finite_problems, randn, rng

#: Kernel (kt, ky, kx) of each definition. Heads and head dimension are the definition's
#: constant axes H and D; the kernel is no axis (only its constraints, its reference's
#: ``KT, KY, KX`` and its ``kernel:`` tag state it), so it is kept here.
KERNELS: dict[str, tuple[int, int, int]] = {
    "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7": (3, 7, 7),
    "neighborhood_attention_3d_h32_d64_kt3_ky7_kx7": (3, 7, 7),
    "neighborhood_attention_3d_h4_d64_kt11_ky11_kx11": (11, 11, 11),
    "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5": (3, 5, 5),
}
#: Plane waves in the smooth part of each feature map, and that part's share of the variance.
SMOOTH_MODES = 6
SMOOTH_SHARE = 0.5


def _feature_map(gen: np.random.Generator, batch: int, volume: tuple[int, int, int],
                 channels: int) -> np.ndarray:
    """Unit-variance float32 features [B, T, Y, X, channels]: smooth field plus noise.

    Each of SMOOTH_MODES plane waves has up to 1.5 cycles across each extent of the volume
    and a random phase per batch element; random mixing weights spread them over channels.
    """
    T, Y, X = volume
    freq = gen.uniform(0.0, 1.5, size=(SMOOTH_MODES, 3))
    phase = gen.uniform(0.0, 2 * np.pi, size=(batch, SMOOTH_MODES))
    mixing = gen.standard_normal(size=(SMOOTH_MODES, channels)) / np.sqrt(SMOOTH_MODES)
    t, y, x = np.meshgrid(np.arange(T) / T, np.arange(Y) / Y, np.arange(X) / X, indexing="ij")
    angle = 2 * np.pi * (t[..., None] * freq[:, 0] + y[..., None] * freq[:, 1]
                         + x[..., None] * freq[:, 2])  # [T, Y, X, modes]
    waves = np.sqrt(2.0) * np.cos(angle[None] + phase[:, None, None, None, :])
    smooth = waves @ mixing  # [B, T, Y, X, channels]
    noise = gen.standard_normal(size=(batch, T, Y, X, channels))
    return (np.sqrt(SMOOTH_SHARE) * smooth + np.sqrt(1.0 - SMOOTH_SHARE) * noise).astype(
        np.float32)


def generate(definition: Definition, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed);
    heads and head dimension are the definition's constant axes H and D."""
    name = definition.name
    if definition.op_type != "neighborhood_attention" or name not in KERNELS:
        raise ValueError(f"{name!r} is not a neighborhood_attention definition")
    heads, dim, kernel = definition.const_axes["H"], definition.const_axes["D"], KERNELS[name]
    batch = int(params["B"])
    volume = (int(params["T"]), int(params["Y"]), int(params["X"]))
    if batch < 1 or any(length < k for length, k in zip(volume, kernel, strict=True)):
        raise ValueError(f"{name}: need B >= 1 and (T, Y, X) >= kernel {kernel}, "
                         f"got B={batch}, (T, Y, X)={volume}")
    channels = heads * dim

    structure = rng(name, "head_structure")
    sharpness = structure.uniform(1.0, 3.0, size=(heads, 1))  # logit std per head
    k_gain = structure.uniform(0.7, 1.3, size=(heads, dim))
    v_gain = structure.uniform(0.5, 1.5, size=(heads, dim))
    v_mean = structure.normal(0.0, 0.5, size=(heads, dim))

    def draw(tensor: str) -> np.ndarray:
        features = _feature_map(rng(name, seed, tensor), batch, volume, channels)
        return features.reshape(batch, *volume, heads, dim)

    q = draw("Q") * (sharpness / np.sqrt(dim))
    k = draw("K") * k_gain
    v = draw("V") * v_gain + v_mean

    def bf16(values: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(
            torch.bfloat16)

    return {"Q": bf16(q), "K": bf16(k), "V": bf16(v)}


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a neighbourhood attention workload; [] if valid."""
    return finite_problems(inputs, ("Q", "K", "V"))


# ------------------------------------------------------------------ benchmark shapes (device)
def bench_inputs(d: Definition, axes: dict[str, int], s: NoStructure, gen: torch.Generator,
                 dev: str) -> Inputs:
    """Q, K and V of one volume; Q carries the model's softmax scale (the definition's
    scale is 1.0)."""
    c = d.const_axes
    shape = (axes["B"], axes["T"], axes["Y"], axes["X"], c["H"], c["D"])
    return {"Q": randn(gen, shape, c["D"] ** -0.5, device=dev),
            "K": randn(gen, shape, device=dev), "V": randn(gen, shape, device=dev)}


FAMILY = Family(op_type="neighborhood_attention", module=__name__, generate=generate,
                check=check, bench_inputs=bench_inputs)
