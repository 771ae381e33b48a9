"""The block_causal_attention family (Qwen-Image 2.1 turbo).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

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

**Value rules** (what the checker adds to shapes, dtypes and constraints):

The prefix0 contract reads ``image_ids`` as a segmentation: -1 is text and every image is
one contiguous run of one non-negative ID. The reference's mask ("same non-negative ID")
would silently join two separate runs that reuse an ID into one bidirectional block,
which contradicts the engine's per-segment composition; so such a layout is rejected
rather than given a meaning. Non-finite activations are rejected because the
reference's output would be non-finite and no candidate could pass.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs
from hf_eval.families.common import attention_activations, finite_problems, randn

PREFIX = "prefix_cached_block_causal_h32_d128"
PREFIX0 = "prefix_cached_block_causal_h32_d128_prefix0"
HEADS = 32
HEAD_DIM = 128


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


def generate(definition: Definition, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    name = definition.name
    batch = int(params["B"])
    qk_std = float(params.get("qk_std", 1.0))
    if name == PREFIX:
        nq, np_ = int(params["Nq"]), int(params["Np"])
        names = ("Q", "K_prefix", "V_prefix", "K_current", "V_current")
        return dict(attention_activations(name, seed, names, (nq, np_, np_, nq, nq), batch,
                                          qk_std, HEADS, HEAD_DIM))
    if name == PREFIX0:
        image_ids = image_ids_from_segments(params["segments"])
        nq = int(image_ids.shape[0])
        names = ("Q", "K_current", "V_current")
        inputs: Inputs = dict(attention_activations(name, seed, names, (nq, nq, nq),
                                                    batch, qk_std, HEADS, HEAD_DIM))
        inputs["image_ids"] = image_ids
        return inputs
    raise ValueError(f"{name!r} is not a block_causal_attention definition")


# ------------------------------------------------------------------ value rules
ACTIVATIONS = ("Q", "K_prefix", "V_prefix", "K_current", "V_current")


def image_ids_problems(image_ids: torch.Tensor) -> list[str]:
    """Messages for IDs below -1 and for non-negative IDs that do not form one run."""
    problems = []
    ids = image_ids.detach().to(device="cpu", dtype=torch.int64).flatten()
    bad = ids < -1
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        problems.append(f"image_ids: every entry must be -1 (text) or a non-negative image "
                        f"block ID; {int(bad.sum())} are not, first at position {first} = "
                        f"{int(ids[first])}")
    if ids.numel() == 0:
        return problems
    starts = torch.ones_like(ids, dtype=torch.bool)
    starts[1:] = ids[1:] != ids[:-1]
    run_starts = starts.nonzero().flatten()
    run_ids = ids[run_starts]
    image_runs = run_ids >= 0
    unique, counts = torch.unique(run_ids[image_runs], return_counts=True)
    split = unique[counts > 1]
    if split.numel() > 0:
        first_id = int(split[0])
        positions = run_starts[image_runs][run_ids[image_runs] == first_id].tolist()
        problems.append(f"image_ids: each non-negative ID must form one contiguous block "
                        f"(distinct blocks need distinct IDs); {split.numel()} IDs do not, "
                        f"e.g. ID {first_id} has {len(positions)} separate runs starting at "
                        f"positions {positions[:4]}")
    return problems


def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a block-causal attention workload."""
    problems = finite_problems(inputs, ACTIVATIONS)
    image_ids = inputs.get("image_ids")
    if isinstance(image_ids, torch.Tensor):
        problems += image_ids_problems(image_ids)
    return problems


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """prefix0 shapes: the text and image runs of the sequence, in order (Nq tokens)."""

    model_config = ConfigDict(extra="forbid")
    segments: list[tuple[Literal["text", "image"], NonNegativeInt]] | None = None
    """The runs of the sequence in order, each ``(kind, tokens)``; they must cover exactly
    ``Nq`` tokens. Required by a shape without ``Np`` (prefix0); None for a prefix-cached
    shape (``Np`` in its axes)."""


def _segment_ids(d: Definition, s: BenchStructure) -> torch.Tensor:
    if s.segments is None:
        raise DataError(d.name, "a benchmark shape without Np needs structure.segments")
    return image_ids_from_segments([list(segment) for segment in s.segments])


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """A prefix-cached shape (``Np`` in the axes), or prefix0 from its segments."""
    b, h, dd, nq = axes["B"], d.const_axes["H"], d.const_axes["D"], axes["Nq"]
    if "Np" in axes:
        np_ = axes["Np"]
        return {"Q": randn(gen, (b, nq, h, dd), device=dev),
                "K_prefix": randn(gen, (b, np_, h, dd), device=dev),
                "V_prefix": randn(gen, (b, np_, h, dd), device=dev),
                "K_current": randn(gen, (b, nq, h, dd), device=dev),
                "V_current": randn(gen, (b, nq, h, dd), device=dev)}
    ids = _segment_ids(d, s)
    if ids.numel() != nq:
        raise DataError(d.name, f"segments cover {ids.numel()} tokens, Nq is {nq}")
    return {"Q": randn(gen, (b, nq, h, dd), device=dev),
            "K_current": randn(gen, (b, nq, h, dd), device=dev),
            "V_current": randn(gen, (b, nq, h, dd), device=dev), "image_ids": ids.to(dev)}


# ------------------------------------------------------------------ roofline counts
def visible_pairs(inputs: Inputs) -> int:
    """Causal pairs plus the strict upper triangle of every image block (contiguous runs)."""
    ids = inputs["image_ids"].to("cpu", torch.int64)
    n = ids.numel()
    values, counts = torch.unique_consecutive(ids, return_counts=True)
    extra = sum(int(c) * (int(c) - 1) // 2 for v, c in zip(values.tolist(), counts.tolist())
                if v >= 0)
    return n * (n + 1) // 2 + extra


def structure_counts(d: Definition, axes: dict[str, int], s: BenchStructure
                     ) -> dict[str, int]:
    """prefix0's visible pairs from its segments (the benchmark inputs use exactly these)."""
    if s.segments is None:
        return {}
    return {"visible_pairs": visible_pairs({"image_ids": _segment_ids(d, s)})}


FAMILY = Family(op_type="block_causal_attention", module=__name__, generate=generate,
                check=check, bench_inputs=bench_inputs, bench_structure=BenchStructure,
                counts={"visible_pairs": Count(("image_ids",), visible_pairs)},
                structure_counts=structure_counts)
