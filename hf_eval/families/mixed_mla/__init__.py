"""The mixed-cache MLA decode family (``mixed_mla``).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

The inputs are byte-exact physical pages of two KV caches, so this module also owns the
*encoder* of the page layout that the definition's reference decodes (see the definition's
description): a test round-trips encode here / decode there. Encoding uses only
deterministic arithmetic (PCG64 draws, IEEE casts), so the bytes are reproducible.

Case ``params``:
- ``B``, ``P8``, ``P4``: batch rows and page counts of the FP8 and FP4 caches;
- ``valid8``, ``valid4``: per batch row, how many index positions hold a slot (the rest
  are -1);
- ``unused``: ``"tail"`` (valid slots first, -1 after, as a short context produces) or
  ``"scattered"`` (the -1 positions are spread over the row);
- ``duplicates`` (default 0): per row and cache, that many valid positions repeat another
  valid position's slot (each occurrence is one key in the contract);
- ``stale_slots`` (default 0): slots ``[0, stale_slots)`` of both caches hold garbage bytes
  (NaN FP8 codes, NaN/Inf FP32 scales, UE8M0 255) and are never referenced, as unwritten
  slots of a real page pool; a kernel that reads unreferenced slots produces NaN;
- ``q_scale`` (default 1.0) and ``sm_scale`` (default DeepSeek's YaRN-scaled
  ``192**-0.5 * 1.36889**2``).

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Only slots referenced by a valid index are checked for well-formed bytes: like a real page
pool, a cache may hold stale or unwritten slots (any bytes), and the contract says they
must not influence the output.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs
from hf_eval.families.common import randn, rng, sink_and_scale, slots, violation

PAGE_SIZE = 64
LATENT_DIM = 512
ROPE_DIM = 64
HEADS = 64
TOPK8 = 128
TOPK4 = 512
KV8_PAYLOAD_BYTES = LATENT_DIM + 2 * ROPE_DIM  # FP8 latent + BF16 rope = 640
KV8_SCALE_BYTES = 4 * (LATENT_DIM // 128)  # 4 FP32 scales = 16
KV4_PAYLOAD_BYTES = LATENT_DIM // 2 + 2 * ROPE_DIM  # packed FP4 latent + BF16 rope = 384
KV4_SCALE_BYTES = LATENT_DIM // 32  # 16 UE8M0 bytes
PAGE_BYTES8 = PAGE_SIZE * (KV8_PAYLOAD_BYTES + KV8_SCALE_BYTES)  # 41984
PAGE_BYTES4 = PAGE_SIZE * (KV4_PAYLOAD_BYTES + KV4_SCALE_BYTES)  # 25600

#: DeepSeek-V3's softmax scale: qk_head_dim 192 with the YaRN mscale (0.1 ln 40 + 1) squared.
DEFAULT_SM_SCALE = 192 ** -0.5 * (0.1 * math.log(40.0) + 1.0) ** 2

FP8_MAX = 448.0
FP4_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)


def _bytes_of(values: torch.Tensor) -> torch.Tensor:
    """The little-endian bytes of a contiguous tensor as int8 ``[..., n * itemsize]``."""
    return values.contiguous().view(torch.int8)


def quantize_fp8_blocks(latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """FP8 E4M3 codes ``[N, 512]`` and FP32 scales ``[N, 4]`` (amax / 448 per 128 values)."""
    blocks = latent.to(torch.float32).reshape(-1, LATENT_DIM // 128, 128)
    scales = (blocks.abs().amax(dim=-1) / FP8_MAX).clamp_min(2.0 ** -100)
    scaled = (blocks / scales[..., None]).clamp(-FP8_MAX, FP8_MAX)
    codes = scaled.to(torch.float8_e4m3fn).reshape(-1, LATENT_DIM)
    return codes, scales


def quantize_fp4_blocks(latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed FP4 E2M1 bytes ``[N, 256]`` and UE8M0 bytes ``[N, 16]`` of ``latent`` [N, 512].

    Each block of 32 values gets the power-of-two scale 2**ceil(log2(amax / 6)) so the
    largest magnitude fits the E2M1 maximum 6; values round to the nearest E2M1 magnitude
    (ties to the smaller one). Low nibble = even element, high nibble = odd element.
    """
    blocks = latent.to(torch.float32).numpy().reshape(-1, LATENT_DIM // 32, 32)
    amax = np.maximum(np.abs(blocks).max(axis=-1), np.float32(2.0 ** -120))
    exponent = np.clip(np.ceil(np.log2(amax / np.float32(6.0))), -127, 127).astype(np.int32)
    scaled = blocks / np.exp2(exponent.astype(np.float32))[..., None]
    magnitude_code = np.abs(np.abs(scaled)[..., None] - FP4_GRID).argmin(axis=-1)
    codes = (magnitude_code | (np.signbit(scaled).astype(np.int64) << 3)).astype(np.uint8)
    codes = codes.reshape(-1, LATENT_DIM)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    scale_bytes = (exponent + 127).astype(np.uint8)
    return (torch.from_numpy(packed).view(torch.int8),
            torch.from_numpy(scale_bytes.reshape(-1, LATENT_DIM // 32)).view(torch.int8))


def _assemble_pages(payload: torch.Tensor, scale_rows: torch.Tensor) -> torch.Tensor:
    """Pages ``[P, page_bytes]``: the 64 payload rows of a page, then its 64 scale rows."""
    pages = payload.shape[0] // PAGE_SIZE
    return torch.cat([payload.reshape(pages, -1), scale_rows.reshape(pages, -1)], dim=1)


def encode_kv8_pages(latent: torch.Tensor, rope: torch.Tensor) -> torch.Tensor:
    """KV8 cache bytes ``[P, 41984]`` for per-slot ``latent`` [P*64, 512] and bf16 ``rope``."""
    codes, scales = quantize_fp8_blocks(latent)
    payload = torch.cat([_bytes_of(codes), _bytes_of(rope.to(torch.bfloat16))], dim=1)
    return _assemble_pages(payload, _bytes_of(scales))


def encode_kv4_pages(latent: torch.Tensor, rope: torch.Tensor) -> torch.Tensor:
    """KV4 cache bytes ``[P, 25600]`` for per-slot ``latent`` [P*64, 512] and bf16 ``rope``."""
    packed, scale_bytes = quantize_fp4_blocks(latent)
    payload = torch.cat([packed, _bytes_of(rope.to(torch.bfloat16))], dim=1)
    return _assemble_pages(payload, scale_bytes)


def _latent_and_rope(definition: str, gen: np.random.Generator,
                     slots: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Model-like cache contents: RMS-normalised latents with per-channel gains and outliers.

    The gains are a property of the model (kv_norm weight), so they come from a stream that
    depends only on the definition; the token values depend on the case.
    """
    weights = rng(definition, "latent_gain")
    gain = weights.lognormal(0.0, 0.35, size=LATENT_DIM).astype(np.float32)
    gain[weights.choice(LATENT_DIM, size=8, replace=False)] *= np.float32(4.0)
    rope_gain = weights.uniform(0.5, 1.5, size=ROPE_DIM).astype(np.float32)
    latent = gen.standard_normal((slots, LATENT_DIM), dtype=np.float32) * gain
    rope = gen.standard_normal((slots, ROPE_DIM), dtype=np.float32) * rope_gain
    return torch.from_numpy(latent), torch.from_numpy(rope).to(torch.bfloat16)


def _stale_fill(pages: torch.Tensor, gen: np.random.Generator, stale: int,
                payload_bytes: int, scale_bytes: int, nan_scale: bytes) -> torch.Tensor:
    """Overwrite slots [0, stale) with random bytes plus a guaranteed NaN code and NaN scale."""
    if stale == 0:
        return pages
    raw = pages.view(torch.uint8).numpy().copy()
    flat_payload = raw[:, : PAGE_SIZE * payload_bytes].reshape(-1, payload_bytes)
    flat_scales = raw[:, PAGE_SIZE * payload_bytes:].reshape(-1, scale_bytes)
    # Work on per-page copies and write back, since the slices above are not contiguous.
    flat_payload[:stale] = gen.integers(0, 256, size=(stale, payload_bytes), dtype=np.uint8)
    flat_scales[:stale] = gen.integers(0, 256, size=(stale, scale_bytes), dtype=np.uint8)
    flat_payload[0, 0] = 0x7F  # an E4M3 NaN code in KV8 (FP4 codes -6, 6 in KV4)
    flat_scales[0, : len(nan_scale)] = np.frombuffer(nan_scale, dtype=np.uint8)
    raw[:, : PAGE_SIZE * payload_bytes] = flat_payload.reshape(raw.shape[0], -1)
    raw[:, PAGE_SIZE * payload_bytes:] = flat_scales.reshape(raw.shape[0], -1)
    return torch.from_numpy(raw).view(torch.int8)


def _index_rows(gen: np.random.Generator, batch: int, topk: int, valid: list[int],
                first_slot: int, slots: int, unused: str, duplicates: int) -> torch.Tensor:
    """``[batch, topk]`` int32 slot indices: distinct slots in random order, -1 unused."""
    rows = np.full((batch, topk), -1, dtype=np.int32)
    for b, count in enumerate(valid):
        if count > slots - first_slot or count > topk:
            raise ValueError(f"row {b}: {count} valid indices do not fit")
        chosen = gen.choice(np.arange(first_slot, slots), size=count, replace=False)
        if duplicates and count > 1:
            targets = gen.choice(count, size=min(duplicates, count - 1), replace=False)
            for target in targets:
                chosen[target] = chosen[(target + 1 + gen.integers(0, count - 1)) % count]
        if unused == "tail":
            positions = np.arange(count)
        elif unused == "scattered":
            positions = np.sort(gen.choice(topk, size=count, replace=False))
        else:
            raise ValueError(f"unused must be 'tail' or 'scattered', not {unused!r}")
        rows[b, positions] = chosen
    return torch.from_numpy(rows)


def generate(definition: Definition, params: dict,
             seed: int) -> dict[str, torch.Tensor | int | float | bool]:
    """Inputs of one ``mixed_mla`` sample workload (see the module docstring for params)."""
    name = definition.name
    batch, pages8, pages4 = int(params["B"]), int(params["P8"]), int(params["P4"])
    valid8, valid4 = list(params["valid8"]), list(params["valid4"])
    if len(valid8) != batch or len(valid4) != batch:
        raise ValueError("valid8 and valid4 need one count per batch row")
    unused = params.get("unused", "tail")
    duplicates = int(params.get("duplicates", 0))
    stale = int(params.get("stale_slots", 0))
    sm_scale = float(params.get("sm_scale", DEFAULT_SM_SCALE))

    # Query: per-head magnitudes are a model property (shared stream); values per case.
    head_scale = rng(name, "q_head_scale").uniform(0.25, 0.8, size=HEADS).astype(np.float32)
    head_scale *= np.float32(params.get("q_scale", 1.0))
    q = rng(name, seed, "Q").standard_normal((batch, HEADS, LATENT_DIM + ROPE_DIM),
                                             dtype=np.float32)
    q *= head_scale[None, :, None]

    cache_gen = rng(name, seed, "KV8")
    kv8 = encode_kv8_pages(*_latent_and_rope(name, cache_gen, pages8 * PAGE_SIZE))
    kv8 = _stale_fill(kv8, cache_gen, stale, KV8_PAYLOAD_BYTES, KV8_SCALE_BYTES,
                      np.float32(np.nan).tobytes())
    cache_gen = rng(name, seed, "KV4")
    kv4 = encode_kv4_pages(*_latent_and_rope(name, cache_gen, pages4 * PAGE_SIZE))
    kv4 = _stale_fill(kv4, cache_gen, stale, KV4_PAYLOAD_BYTES, KV4_SCALE_BYTES, b"\xff")

    index_gen = rng(name, seed, "indices")
    indices8 = _index_rows(index_gen, batch, TOPK8, valid8, stale, pages8 * PAGE_SIZE,
                           unused, duplicates)
    indices4 = _index_rows(index_gen, batch, TOPK4, valid4, stale, pages4 * PAGE_SIZE,
                           unused, duplicates)

    sink = rng(name, "attn_sink").uniform(3.0, 11.0, size=HEADS).astype(np.float32)
    return {
        "Q": torch.from_numpy(q).to(torch.bfloat16),
        "KV8": kv8,
        "KV4": kv4,
        "indices8": indices8,
        "indices4": indices4,
        "attn_sink": torch.from_numpy(sink),
        "sm_scale": sm_scale,
    }


# ------------------------------------------------------------------ value rules
def _slot_rows(pages: torch.Tensor, slots: torch.Tensor, row_bytes: int,
               region_start: int) -> torch.Tensor:
    """The ``row_bytes`` bytes of each slot in the region starting at ``region_start``."""
    columns = (region_start + (slots % PAGE_SIZE)[:, None] * row_bytes
               + torch.arange(row_bytes, device=pages.device)[None, :])
    return pages[(slots // PAGE_SIZE)[:, None], columns]


def _index_problems(name: str, indices: torch.Tensor, pages: int) -> tuple[list[str], torch.Tensor]:
    """Range problems of one index tensor and the distinct slots it validly references."""
    limit = pages * PAGE_SIZE
    flat = indices.to(torch.int64)
    bad = (flat != -1) & ((flat < 0) | (flat >= limit))
    problems = violation(name, f"every entry must be -1 (unused) or a slot page * 64 + offset "
                         f"in [0, {limit}) for {pages} pages", bad, flat, "entries are not")
    used = flat[(flat >= 0) & (flat < limit)]
    return problems, torch.unique(used)


def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a mixed MLA workload; empty when valid."""
    kv8, kv4 = inputs["KV8"], inputs["KV4"]
    problems8, slots8 = _index_problems("indices8", inputs["indices8"], kv8.shape[0])
    problems4, slots4 = _index_problems("indices4", inputs["indices4"], kv4.shape[0])
    problems = problems8 + problems4

    scales8 = _slot_rows(kv8, slots8, KV8_SCALE_BYTES, PAGE_SIZE * KV8_PAYLOAD_BYTES)
    scales8 = scales8.contiguous().view(torch.float32)  # [N, 4]
    bad = ~(torch.isfinite(scales8) & (scales8 > 0)).all(dim=1)
    if bool(bad.any()):
        problems.append(
            f"KV8: the 4 FP32 scales of every referenced slot must be finite and positive; "
            f"{int(bad.sum())} slots are not, first slot {int(slots8[bad][0])}")
    payload8 = _slot_rows(kv8, slots8, KV8_PAYLOAD_BYTES, 0)
    codes = payload8[:, :LATENT_DIM]
    bad = ((codes == 0x7F) | (codes == -1)).any(dim=1)  # E4M3FN NaN: 0x7F and 0xFF
    if bool(bad.any()):
        problems.append(
            f"KV8: the FP8 E4M3 latent of every referenced slot must hold no NaN code "
            f"(0x7F, 0xFF); {int(bad.sum())} slots do, first slot {int(slots8[bad][0])}")
    rope8 = payload8[:, LATENT_DIM:].contiguous().view(torch.bfloat16)
    bad = ~torch.isfinite(rope8).all(dim=1)
    if bool(bad.any()):
        problems.append(f"KV8: the BF16 rope of every referenced slot must be finite; "
                        f"{int(bad.sum())} slots are not, first slot {int(slots8[bad][0])}")

    scales4 = _slot_rows(kv4, slots4, KV4_SCALE_BYTES, PAGE_SIZE * KV4_PAYLOAD_BYTES)
    bad = (scales4 == -1).any(dim=1)  # UE8M0 byte 255 is not a number
    if bool(bad.any()):
        problems.append(
            f"KV4: the 16 UE8M0 scale bytes of every referenced slot must not be 255 (NaN); "
            f"{int(bad.sum())} slots have one, first slot {int(slots4[bad][0])}")
    rope4 = _slot_rows(kv4, slots4, KV4_PAYLOAD_BYTES, 0)[:, LATENT_DIM // 2:]
    bad = ~torch.isfinite(rope4.contiguous().view(torch.bfloat16)).all(dim=1)
    if bool(bad.any()):
        problems.append(f"KV4: the BF16 rope of every referenced slot must be finite; "
                        f"{int(bad.sum())} slots are not, first slot {int(slots4[bad][0])}")
    return problems + sink_and_scale(inputs)


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """What the shape files record of each request's selection: ``valid8`` and ``valid4``
    slots (informational: the inputs select min(top-k, the request's slots) of each)."""

    model_config = ConfigDict(extra="forbid")
    valid8: NonNegativeInt | None = None
    """Valid slots of each request's selection in the FP8 cache (``indices8``), as the shape
    file records it; informational: nothing reads it."""
    valid4: NonNegativeInt | None = None
    """Valid slots of each request's selection in the FP4 cache (``indices4``), as the shape
    file records it; informational: nothing reads it."""


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """Each request's own pages of both caches (real FP8 codes and scales, random FP4
    bytes), its top-k distinct slots in them, DeepSeek's softmax scale."""
    c = d.const_axes
    b, p8, p4, ps = axes["B"], axes["P8"], axes["P4"], c["page_size"]
    lat8 = torch.randn((p8 * ps, c["D"]), generator=gen, device=dev)
    codes, scales = quantize_fp8_blocks(lat8)
    rope8 = randn(gen, (p8 * ps, c["R"]), device=dev)
    kv8 = _assemble_pages(torch.cat([codes.view(torch.int8), rope8.view(torch.int8)], 1),
                          scales.contiguous().view(torch.int8))
    packed = torch.randint(-128, 128, (p4 * ps, c["D"] // 2), generator=gen, device=dev,
                           dtype=torch.int8)
    rope4 = randn(gen, (p4 * ps, c["R"]), device=dev)
    scale4 = torch.randint(122, 127, (p4 * ps, c["D"] // 32), generator=gen, device=dev,
                           dtype=torch.int8)
    kv4 = _assemble_pages(torch.cat([packed, rope4.view(torch.int8)], 1), scale4)
    return {"Q": randn(gen, (b, c["H"], c["D_qk"]), device=dev), "KV8": kv8, "KV4": kv4,
            "indices8": slots(gen, b, p8 // b, ps, c["topk8"], dev),
            "indices4": slots(gen, b, p4 // b, ps, c["topk4"], dev),
            "attn_sink": torch.randn(c["H"], generator=gen, device=dev),
            "sm_scale": DEFAULT_SM_SCALE}


# ------------------------------------------------------------------ roofline counts
def structure_counts(d: Definition, axes: dict[str, int], s: BenchStructure
                     ) -> dict[str, int]:
    """Valid indices over the batch: every request selects min(top-k, its slots)."""
    c = d.const_axes
    b, ps = axes["B"], c["page_size"]
    return {"valid8": b * min(c["topk8"], axes["P8"] // b * ps),
            "valid4": b * min(c["topk4"], axes["P4"] // b * ps)}


FAMILY = Family(op_type="mixed_mla", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, bench_structure=BenchStructure,
                counts={"valid8": Count(("indices8",), lambda x: int((x["indices8"] >= 0).sum())),
                        "valid4": Count(("indices4",), lambda x: int((x["indices4"] >= 0).sum()))},
                structure_counts=structure_counts)
