"""The DeepSeek-V4.1 vision-language MoE router (``moe_router``).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Case ``params``:
- ``T``: tokens;
- ``modality``: ``"text"``, ``"image"`` or ``"mixed"``; mixed takes ``image_spans``
  ``[[start, length], ...]`` (image tokens come in contiguous runs inside text, as an
  image's patch tokens do in a real prompt);
- ``routed_scale`` (default 2.5, DeepSeek's routed scaling factor);
- ``near_tie_rows``: row indices constructed so that the 6th and 7th largest keys differ by
  2e-5 .. 5e-5 (small, but far above FP32 GEMM noise of about 1e-6 in the keys);
- ``zero_rows``: row indices that are all-zero tokens (padding): every logit is exactly 0
  in any arithmetic, so the keys are sqrt(ln 2) + bias and the bias decides;
- ``duplicate_tie_rows``: row indices constructed so that experts 77 and 301 (identical
  rows of W and identical biases, see below) tie exactly at ranks 6 and 7: the tie rule
  (lower ID wins) alone decides that 77 is selected and 301 is not;
- ``x_std`` (default 1.0) and ``row_sigma`` (default 0.25): token magnitudes.

Every other row is an ordinary token: N(0, x_std) times per-channel gains (the RMSNorm
weight) and a log-normal per-token gain, rounded to BF16, redrawn until its 6th-vs-7th
key margin is at least 1e-4, so its selected set is unambiguous for any FP32 kernel.

Layer parameters (shared by every workload, streams seeded by the definition only):
- ``W`` [384, 5120]: N(0, 0.021) times per-expert gains, BF16; logits come out O(1.5),
  like a trained router's. Expert 301's row is a copy of expert 77's (a deliberate
  fixture for the exact-tie rule; ordinary rows never put the pair at the boundary).
- ``bias_text``, ``bias_image``: N(0, 0.1) rounded to multiples of 2**-10, as the
  aux-loss-free balancing biases are (they move in fixed steps), so equal biases occur;
  expert 301 copies expert 77's biases, and the 7th-largest text bias is set equal to
  the 6th-largest, so an all-zero text token has an exact tie at the selection boundary.

Exact ties are only constructed where the keys are equal whatever the summation order:
zero tokens, and tokens with at most 64 non-zero entries of +-2**j on coordinates where
expert 77's weight lies in [2**-8, 2**-4), whose dot products with rows 77 and 301 are
sums of multiples of 2**-15 below 2**6, exact in FP32.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Non-finite hidden states, weights or biases make the selection undefined (NaN keys have
no order), and the weights must scale by a finite positive factor. Ties are *not* a
rule violation: the contract defines them (lower expert ID wins).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from hf_eval.data.schema import Definition
from hf_eval.families.base import Family, Inputs, NoStructure
from hf_eval.families.common import non_finite, positive_scale, randn, rng

HIDDEN = 5120
EXPERTS = 384
TOP_K = 6
DEFINITIONS = ("moe_router_gemm_topk_deepseek41_d5120_e384_topk6",)
#: Expert DUPLICATE[1]'s weight row and biases are copies of DUPLICATE[0]'s.
DUPLICATE = (77, 301)
BIAS_GRID = 2.0 ** -10
#: Minimum 6th-vs-7th key margin of ordinary rows, and the window of near-tie rows.
ORDINARY_MARGIN = 1e-4
NEAR_TIE_WINDOW = (2e-5, 5e-5)
WEIGHT_STD = 0.021


def _bf16(values: np.ndarray) -> np.ndarray:
    """Round float values to BF16 (nearest even) and return them as float64."""
    return torch.from_numpy(np.asarray(values, dtype=np.float32)).to(
        torch.bfloat16).to(torch.float64).numpy()


def layer_parameters(definition: str) -> dict[str, np.ndarray]:
    """W (BF16 values as float64) and the two biases (float32), shared by all workloads."""
    gen = rng(definition, "W")
    gain = gen.uniform(0.85, 1.15, size=(EXPERTS, 1)).astype(np.float32)
    w = gen.standard_normal((EXPERTS, HIDDEN), dtype=np.float32) * np.float32(WEIGHT_STD) * gain
    w = _bf16(w)
    a, b = DUPLICATE
    w[b] = w[a]
    biases = {}
    for name in ("bias_text", "bias_image"):
        draw = rng(definition, name).standard_normal(EXPERTS) * 0.1
        bias = (np.round(draw / BIAS_GRID) * BIAS_GRID).astype(np.float32)
        bias[b] = bias[a]
        biases[name] = bias
    # All-zero text tokens rank experts by bias_text alone: make ranks 6 and 7 tie exactly.
    text = biases["bias_text"]
    order = np.lexsort((np.arange(EXPERTS), -text))  # by bias descending, then ID
    text[order[TOP_K]] = text[order[TOP_K - 1]]
    for bias in biases.values():
        assert bias[b] == bias[a], "the tie fixture must keep the duplicated experts' biases"
    return {"W": w, **biases}


def reference_keys(x: np.ndarray, w: np.ndarray,
                   bias: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys32, scores32, keys64) of rows ``x`` [R, D], computed as the reference does.

    keys32 follows the reference exactly (FP64 logits rounded to FP32, then FP32 math);
    keys64 is the same computation in FP64, used to measure margins.
    """
    logits64 = x @ w.T
    logits = torch.from_numpy(logits64).to(torch.float32)
    scores = torch.sqrt(torch.clamp(logits, min=0) + torch.log1p(torch.exp(-logits.abs())))
    keys = scores + torch.from_numpy(bias).to(torch.float32)
    keys64 = np.sqrt(np.maximum(logits64, 0) + np.log1p(np.exp(-np.abs(logits64)))) + bias
    return keys.numpy(), scores.numpy(), keys64


def boundary(keys64: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the experts ranked 1..8 (ties to lower ID) and the 6th-vs-7th key margin."""
    ids = np.arange(keys64.shape[-1])
    ranked = np.stack([np.lexsort((ids, -row))[:TOP_K + 2] for row in np.atleast_2d(keys64)])
    top = np.take_along_axis(np.atleast_2d(keys64), ranked, axis=-1)
    return ranked, top[:, TOP_K - 1] - top[:, TOP_K]


def _ordinary_row(gen: np.random.Generator, gain: np.ndarray, w: np.ndarray,
                  bias: np.ndarray, x_std: float, row_sigma: float) -> np.ndarray:
    """A model-like token whose selection boundary margin is at least ORDINARY_MARGIN."""
    for _ in range(1000):
        scale = np.float32(x_std * gen.lognormal(0.0, row_sigma))
        x = _bf16(gen.standard_normal(HIDDEN, dtype=np.float32) * gain * scale)
        _, margin = boundary(reference_keys(x[None], w, bias)[2])
        if margin[0] >= ORDINARY_MARGIN:
            return x
    raise RuntimeError("no ordinary token with a clear selection boundary")


def _near_tie_row(gen: np.random.Generator, gain: np.ndarray, w: np.ndarray,
                  bias: np.ndarray, x_std: float, row_sigma: float) -> np.ndarray:
    """An ordinary token nudged on a few coordinates until its boundary margin is tiny.

    Each step linearises the 6th-vs-7th margin in one coordinate (d key / d logit =
    sigmoid(logit) / (2 score)) and picks, among 512 random coordinates, the BF16 value
    whose predicted margin is nearest the window's centre; it stops once the exact
    (FP64) margin is inside the window and the FP32 keys rank the same way.
    """
    low, high = NEAR_TIE_WINDOW
    target = (low + high) / 2
    for _ in range(200):
        x = _ordinary_row(gen, gain, w, bias, x_std, row_sigma)
        for _ in range(8):
            keys32, _, keys64 = reference_keys(x[None], w, bias)
            ranked, margin = boundary(keys64)
            sixth, seventh = ranked[0, TOP_K - 1], ranked[0, TOP_K]
            if low <= margin[0] <= high and keys32[0, sixth] > keys32[0, seventh]:
                return x
            logits = w[[sixth, seventh]] @ x
            score = np.sqrt(np.logaddexp(0.0, logits))
            slope_per_logit = 1.0 / (1.0 + np.exp(-logits)) / (2.0 * score)
            coords = gen.choice(HIDDEN, size=512, replace=False)
            slope = (slope_per_logit[0] * w[sixth, coords]
                     - slope_per_logit[1] * w[seventh, coords])
            with np.errstate(divide="ignore"):
                wanted = x[coords] + (target - margin[0]) / slope
            ok = np.isfinite(wanted) & (np.abs(wanted) < 4.0 * x_std)
            if not ok.any():
                break
            coords, slope, wanted = coords[ok], slope[ok], _bf16(wanted[ok])
            predicted = margin[0] + slope * (wanted - x[coords])
            best = int(np.argmin(np.abs(predicted - target)))
            x = x.copy()
            x[coords[best]] = wanted[best]
    raise RuntimeError("could not construct a near-tie token")


def _duplicate_tie_row(gen: np.random.Generator, w: np.ndarray,
                       bias: np.ndarray) -> np.ndarray:
    """A sparse token on which the duplicated experts tie exactly at ranks 6 and 7."""
    a, b = DUPLICATE
    magnitude = np.abs(w[a])
    eligible = np.flatnonzero((magnitude >= 2.0 ** -8) & (magnitude < 2.0 ** -4))
    for _ in range(100_000):
        size = int(gen.integers(24, 65))
        coords = gen.choice(eligible, size=size, replace=False)
        aligned = gen.random(size) < gen.uniform(0.1, 0.9)
        signs = np.where(aligned, np.sign(w[a, coords]), gen.choice([-1.0, 1.0], size=size))
        x = np.zeros(HIDDEN)
        x[coords] = signs * 2.0 ** int(gen.integers(0, 3))
        keys32, _, keys64 = reference_keys(x[None], w, bias)
        ranked = boundary(keys64)[0][0]
        if sorted(ranked[TOP_K - 1:TOP_K + 1].tolist()) != [a, b]:
            continue
        top = keys64[0, ranked]
        clear = (top[TOP_K - 2] - top[TOP_K - 1] >= ORDINARY_MARGIN
                 and top[TOP_K] - top[TOP_K + 1] >= ORDINARY_MARGIN)
        if clear and keys32[0, a] == keys32[0, b]:
            return x
    raise RuntimeError("could not construct a duplicate-expert tie token")


def _image_mask(params: dict, tokens: int) -> np.ndarray:
    modality = params.get("modality", "text")
    if modality == "text":
        return np.zeros(tokens, dtype=bool)
    if modality == "image":
        return np.ones(tokens, dtype=bool)
    if modality != "mixed":
        raise ValueError(f"modality must be text, image or mixed, not {modality!r}")
    mask = np.zeros(tokens, dtype=bool)
    for start, length in params["image_spans"]:
        if not (0 <= start and length >= 1 and start + length <= tokens):
            raise ValueError(f"image span {[start, length]} is outside [0, {tokens})")
        mask[start:start + length] = True
    return mask


def generate(definition: Definition, params: dict, seed: int) -> dict[str, torch.Tensor | float]:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    name = definition.name
    if name not in DEFINITIONS:
        raise ValueError(f"{name!r} is not a moe_router definition")
    tokens = int(params["T"])
    is_image = _image_mask(params, tokens)
    routed_scale = float(params.get("routed_scale", 2.5))
    x_std, row_sigma = float(params.get("x_std", 1.0)), float(params.get("row_sigma", 0.25))
    kinds = ["ordinary"] * tokens
    for kind in ("near_tie_rows", "zero_rows", "duplicate_tie_rows"):
        for row in params.get(kind, []):
            if not 0 <= row < tokens or kinds[row] != "ordinary":
                raise ValueError(f"{kind}: row {row} is out of range or already special")
            kinds[row] = kind

    layer = layer_parameters(name)
    w = layer["W"]
    gain = rng(name, "channel_gain").lognormal(0.0, 0.3, size=HIDDEN).astype(np.float32)
    gen = rng(name, seed, "X")
    x = np.zeros((tokens, HIDDEN))
    for t, kind in enumerate(kinds):
        bias = layer["bias_image"] if is_image[t] else layer["bias_text"]
        if kind == "ordinary":
            x[t] = _ordinary_row(gen, gain, w, bias, x_std, row_sigma)
        elif kind == "near_tie_rows":
            x[t] = _near_tie_row(gen, gain, w, bias, x_std, row_sigma)
        elif kind == "duplicate_tie_rows":
            x[t] = _duplicate_tie_row(gen, w, bias)
        # zero_rows stay zero
    assert math.isfinite(routed_scale) and routed_scale > 0
    return {
        "X": torch.from_numpy(x).to(torch.bfloat16),
        "W": torch.from_numpy(w).to(torch.bfloat16),
        "bias_text": torch.from_numpy(layer["bias_text"]),
        "bias_image": torch.from_numpy(layer["bias_image"]),
        "is_image_token": torch.from_numpy(is_image),
        "routed_scale": routed_scale,
    }


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a router workload; empty when valid."""
    problems = []
    for name in ("X", "W", "bias_text", "bias_image"):
        problems += non_finite(name, inputs[name])
    return problems + positive_scale("routed_scale", inputs["routed_scale"])


# ------------------------------------------------------------------ benchmark shapes (device)
def bench_inputs(d: Definition, axes: dict[str, int], s: NoStructure, gen: torch.Generator,
                 dev: str) -> Inputs:
    """Random tokens (half of them image tokens), a router weight of the model's scale."""
    c, t = d.const_axes, axes["T"]
    return {"X": randn(gen, (t, c["D"]), device=dev),
            "W": randn(gen, (c["E"], c["D"]), 0.021, device=dev),
            "bias_text": torch.randn(c["E"], generator=gen, device=dev) * 0.01,
            "bias_image": torch.randn(c["E"], generator=gen, device=dev) * 0.01,
            "is_image_token": torch.rand(t, generator=gen, device=dev) < 0.5,
            "routed_scale": 2.5}


# ------------------------------------------------------------------ judging drawn content
#: A 6th-vs-7th key margin (FP64) this far above zero and below is left open: FP32
#: summation in another order moves keys by about 1e-6, and the valid workloads keep
#: margins of at least NEAR_TIE_WINDOW[0] (or exactly 0, where the tie rule decides).
UNDECIDED_MARGIN = 1e-5


def undecided_rows(inputs: list[object], outputs: tuple[torch.Tensor, ...],
                   rows: torch.Tensor) -> torch.Tensor:
    """Tokens of drawn content, of those marked in ``rows``, whose selection the definition
    leaves open, and where ``outputs`` chose an answer it allows there. Open: 0 < margin <
    UNDECIDED_MARGIN between the 6th and 7th keys, computed as the reference's FP64 logits
    are. Allowed: six distinct experts, none of them below an unchosen one by more than
    that margin (either side of the boundary, not any answer). An exact tie (margin 0:
    identical expert rows and biases, or all-zero tokens) is decided by the tie rule in any
    arithmetic, so it stays judged."""
    x, w, bias_text, bias_image, is_image = inputs[:5]
    logits = x.to(torch.float64) @ w.to(torch.float64).T
    scores = torch.sqrt(torch.clamp(logits, min=0) + torch.log1p(torch.exp(-logits.abs())))
    bias = torch.where(is_image[:, None], bias_image[None, :], bias_text[None, :])
    keys = scores + bias.to(torch.float64)
    top = torch.topk(keys, TOP_K + 1, dim=-1).values
    margin = top[:, TOP_K - 1] - top[:, TOP_K]
    open_rows = (margin > 0) & (margin < UNDECIDED_MARGIN)
    ids = outputs[0].to(keys.device).long()
    if ids.shape != (keys.shape[0], TOP_K):
        return torch.zeros_like(open_rows)
    in_range = ((ids >= 0) & (ids < keys.shape[1])).all(dim=1)
    ids = ids.clamp(0, keys.shape[1] - 1)
    chosen = torch.zeros_like(keys, dtype=torch.bool).scatter_(1, ids, True)
    distinct = chosen.sum(dim=1) == TOP_K
    lowest_chosen = keys.masked_fill(~chosen, float("inf")).min(dim=1).values
    highest_other = keys.masked_fill(chosen, float("-inf")).max(dim=1).values
    allowed = in_range & distinct & (lowest_chosen >= highest_other - UNDECIDED_MARGIN)
    return open_rows & allowed & rows.to(open_rows.device)


def open_truth(inputs: list[object], outputs: tuple[torch.Tensor, ...],
               reference: tuple[torch.Tensor, ...], rows: torch.Tensor
               ) -> tuple[torch.Tensor, ...]:
    """The truth with the open ``rows`` (:func:`undecided_rows`) set to the experts the
    candidate chose there, ascending, and their weights computed as the definition does:
    the FP32 sqrt-softplus scores of those experts, normalised, times ``routed_scale``."""
    x, w, _, _, _, routed_scale = inputs[:6]
    ids, weights = (r.clone() for r in reference)
    where = rows.to(ids.device)
    chosen = torch.sort(outputs[0].to(ids.device)[where].long(), dim=-1).values
    logits = (x[where.to(x.device)].to(torch.float64) @ w.to(torch.float64).T
              ).to(torch.float32)
    scores = torch.sqrt(torch.clamp(logits, min=0) + torch.log1p(torch.exp(-logits.abs())))
    selected = torch.gather(scores, 1, chosen.to(scores.device))
    ids[where] = chosen.to(ids.dtype)
    weights[where] = (selected / selected.sum(dim=-1, keepdim=True) * routed_scale).to(
        weights.device, weights.dtype)
    return ids, weights


FAMILY = Family(op_type="moe_router", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, undecided_rows=undecided_rows,
                open_truth=open_truth)
