"""What several families share: seeded draws, rule messages, device draws.

- **Sample draws** (NumPy PCG64): generators draw with ``numpy.random.default_rng``
  rather than torch's RNG because torch's random streams are not stable across versions;
  the sample's content hashes must be reproducible on any machine that regenerates a
  large tensor.
- **Rule messages**: each family decides *which* inputs a check applies to; the wording of
  a message lives here once, so that two families reporting the same kind of violation say
  it the same way (the checker's output and the tests match on these texts).
- **Device draws** (torch's generator): benchmark-shape inputs are drawn on the device
  for timing only and never stored, so cross-version stability does not matter there.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import torch

from hf_eval.families.base import Inputs


# ------------------------------------------------------------------ sample draws (PCG64)
def stable_seed(*parts: object) -> int:
    """A 63-bit seed derived from names (e.g. the definition and an input name)."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def rng(*parts: object) -> np.random.Generator:
    """A PCG64 generator seeded from ``parts`` (ints and strings)."""
    return np.random.default_rng(stable_seed(*parts))


def normal(gen: np.random.Generator, shape: tuple[int, ...], std: float = 1.0,
           dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """Gaussian values drawn in float32 and rounded to ``dtype`` (round-to-nearest-even)."""
    values = gen.standard_normal(size=shape, dtype=np.float32) * np.float32(std)
    return torch.from_numpy(values).to(dtype)


def uniform(gen: np.random.Generator, shape: tuple[int, ...], low: float, high: float,
            dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Uniform values in [low, high) drawn in float32 and cast to ``dtype``."""
    values = gen.uniform(low, high, size=shape).astype(np.float32)
    return torch.from_numpy(values).to(dtype)


def random_bytes(gen: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Uniform random bytes as an int8 tensor (bit patterns, e.g. packed FP4 codes)."""
    values = gen.integers(0, 256, size=shape, dtype=np.uint8)
    return torch.from_numpy(values).view(torch.int8)


def attention_activations(definition: str, seed: int, names: tuple[str, ...],
                          lengths: tuple[int, ...], batch: int, qk_std: float, heads: int,
                          head_dim: int) -> dict[str, torch.Tensor]:
    """Q/K/V-like bf16 tensors ``[batch, length, heads, head_dim]`` with model-like structure
    (the dense and block-causal attention samples).

    Names starting with ``Q`` are queries, ``K`` keys, ``V`` values. Per-head temperatures
    and per-channel gains are drawn once per case (stream ``"head_structure"``) and shared
    by all keys of the case (prefix and current keys come from the same layer); each tensor's
    noise comes from the stream of its own name.
    """
    structure = rng(definition, seed, "head_structure")
    head_temp = structure.uniform(0.7, 1.5, size=(heads, 1)).astype(np.float32)
    q_gain = structure.uniform(0.6, 1.4, size=(heads, head_dim)).astype(np.float32)
    k_gain = structure.uniform(0.6, 1.4, size=(heads, head_dim)).astype(np.float32)
    k_mean = structure.normal(0.0, 0.4, size=(heads, head_dim)).astype(np.float32)
    v_gain = structure.uniform(0.5, 1.5, size=(heads, head_dim)).astype(np.float32)
    v_mean = structure.normal(0.0, 0.3, size=(heads, head_dim)).astype(np.float32)
    out: dict[str, torch.Tensor] = {}
    for name, length in zip(names, lengths, strict=True):
        noise = normal(rng(definition, seed, name), (batch, length, heads, head_dim),
                       dtype=torch.float32)
        if name.startswith("Q"):
            values = noise * torch.from_numpy(q_gain * head_temp * np.float32(qk_std))
        elif name.startswith("K"):
            values = (noise * torch.from_numpy(k_gain) + torch.from_numpy(k_mean)) * qk_std
        else:
            values = noise * torch.from_numpy(v_gain) + torch.from_numpy(v_mean)
        out[name] = values.to(torch.bfloat16)
    return out


# ------------------------------------------------------------------ rule messages
def first(mask: torch.Tensor) -> str:
    """Position of the first True element of ``mask``, for a message."""
    return str(tuple(int(i) for i in mask.nonzero()[0].tolist()))


def violation(name: str, rule: str, bad: torch.Tensor, values: torch.Tensor | None = None,
              counted: str = "are not") -> list[str]:
    """``[message]`` when any element of ``bad`` is set, else ``[]``.

    The message is ``"<name>: <rule>; <count> <counted>, first at <position>"``, followed
    by ``" = <value>"`` (the first offending element of ``values``) when ``values`` is given.
    """
    if not bool(bad.any()):
        return []
    message = f"{name}: {rule}; {int(bad.sum())} {counted}, first at {first(bad)}"
    if values is not None:
        message += f" = {int(values[bad][0])}"
    return [message]


def non_finite(name: str, tensor: torch.Tensor, show_value: bool = False) -> list[str]:
    """``[message]`` when ``tensor`` holds a NaN or infinity, else ``[]``.

    ``show_value`` appends the first offending value (``nan``, ``inf`` or ``-inf``).
    """
    if bool(torch.isfinite(tensor).all()):
        return []
    bad = ~torch.isfinite(tensor.cpu())
    message = (f"{name}: every value must be finite; {int(bad.sum())} are not, "
               f"first at {first(bad)}")
    if show_value:
        position = tuple(int(i) for i in bad.nonzero()[0].tolist())
        message += f" = {float(tensor[position])}"
    return [message]


def finite_problems(inputs: Inputs, names: tuple[str, ...]) -> list[str]:
    """One message per floating-point tensor among ``names`` that holds a NaN or infinity.

    Inputs that are absent, scalars or integer tensors are not this rule's business.
    """
    problems = []
    for name in names:
        value = inputs.get(name)
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            problems += non_finite(name, value, show_value=True)
    return problems


def page_table_range(page_table: torch.Tensor, num_pages: int) -> list[str]:
    """Every page-table entry must be -1 (unused) or a page of the pool."""
    bad = (page_table != -1) & ((page_table < 0) | (page_table >= num_pages))
    return violation("page_table", f"every entry must be -1 (unused) or a page in "
                     f"[0, {num_pages})", bad, page_table)


def positive_scale(name: str, value: object) -> list[str]:
    """A scalar scale factor must be finite and positive."""
    scale = float(value)
    if not (math.isfinite(scale) and scale > 0):
        return [f"{name}: must be finite and positive, got {scale}"]
    return []


def sink_and_scale(inputs: Inputs) -> list[str]:
    """The sink logits (finite or -inf) and ``sm_scale`` of the MLA families."""
    problems = []
    sink = inputs["attn_sink"].to(torch.float32)
    bad = torch.isnan(sink) | (sink == math.inf)
    if bool(bad.any()):
        problems.append(f"attn_sink: every entry must be a finite logit or -inf (no sink); "
                        f"head {first(bad)} is {float(sink[bad][0])}")
    return problems + positive_scale("sm_scale", inputs["sm_scale"])

# ------------------------------------------------------------------ device draws (torch)
def randn(gen: torch.Generator, shape: tuple[int, ...], std: float = 1.0,
          dtype: torch.dtype = torch.bfloat16, device: str = "cuda") -> torch.Tensor:
    """N(0, std) drawn with ``gen`` on ``device``, cast to ``dtype``."""
    return (torch.randn(shape, generator=gen, device=device) * std).to(dtype)


def page_table(gen: torch.Generator, batch: int, max_pages: int, pages: int,
               device: str) -> torch.Tensor:
    """``[batch, max_pages]`` int32: distinct pages of a pool of ``pages``, shuffled."""
    return torch.randperm(pages, generator=gen, device=device)[: batch * max_pages].reshape(
        batch, max_pages).to(torch.int32)


def slots(gen: torch.Generator, batch: int, pages_each: int, page_size: int, take: int,
          device: str) -> torch.Tensor:
    """``take`` distinct token slots per request inside its own contiguous page range."""
    per = pages_each * page_size
    local = torch.rand((batch, per), generator=gen, device=device).argsort(dim=1)[:, :take]
    found = (local + torch.arange(batch, device=device)[:, None] * per).to(torch.int32)
    if take > per:  # fewer slots than the top-k: the rest unused (-1), as the engine pads
        pad = torch.full((batch, take - per), -1, dtype=torch.int32, device=device)
        found = torch.cat([found, pad], dim=1)
    return found
