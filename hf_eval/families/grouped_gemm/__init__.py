"""The DeepSeek-V4.1 MoE expert grouped GEMM (``grouped_gemm``).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Inputs: FP8 E4M3 activations ``Aq [M, K]`` with UE8M0 scales ``scale_A [M, K/32]``, packed
FP4 E2M1 expert weights ``Wq_packed [E, N, K/2]`` with UE8M0 scales ``scale_W [E, N, K/32]``,
and the sorted ``expert_id [M]`` of every row.

Case ``params`` choose which experts receive rows, either explicitly or at random:
- ``groups``: ``[[expert, rows], ...]``: distinct experts, each with ``rows >= 1`` rows (the
  rows are emitted sorted by expert, whatever the list order);
- or ``rows`` and ``experts``: ``rows`` rows spread over ``experts`` distinct experts drawn
  uniformly, with load-imbalanced counts (Dirichlet(1) shares, every chosen expert >= 1);
- ``act_std`` (default 1.0): activation magnitude before quantisation;
- ``row_sigma`` (default 0.5): log-normal spread of per-row (per-token) magnitudes.

Values imitate a real checkpoint and a real engine rather than uniform noise:
- activations are N(0, act_std) times per-row gains and per-channel gains, with a few
  "massive activation" channels (x8..x16), then block-quantised exactly as DeepSeek's
  engine does: per 32 values, the scale is ``amax / 448`` rounded *up* to a power of two
  (UE8M0), the values divided by it and cast to E4M3 (round to nearest even). So scale
  bytes differ between rows and between blocks of a row, and a kernel that applies the
  wrong block's scale fails;
- weights are the same for every workload of a definition (a layer's parameters), drawn
  from streams that depend only on the definition and the expert, so they are stored
  once. Drawing 4.5 GB of Gaussians and quantising them would take minutes, so the FP4
  codes are drawn directly from the code distribution that quantising N(0, 1) blocks with
  the same ceil-to-power-of-two rule produces (measured once, :data:`FP4_CODE_SLOTS`), and
  the scale bytes from the exponent distribution of N(0, 0.02) weights
  (:data:`SCALE_W_SLOTS`: about 54 % byte 120, 46 % byte 121, rare 119 and 122). The
  dequantised weights then have a standard deviation of about 0.017, like real
  expert weights, and outputs are O(1).

Memory and speed: the weights are written expert by expert into one preallocated tensor
(peak = the tensor itself + one expert's slab, about 4.6 GB for n4608_k5120); each slab is
one ``uint16`` draw mapped through a 65536-entry byte table (two codes per draw), about
0.05 s per expert. Nothing is cached between calls, so a process that only regenerates
one tensor does not keep gigabytes alive afterwards.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Every packed FP4 byte is a valid pair of codes, so ``Wq_packed`` has no value rule. The
scales must not hold UE8M0's NaN byte, activations must not hold FP8 NaN codes, and the
rows must be grouped by expert in ascending order with IDs naming real experts.
"""

from __future__ import annotations

import functools

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, PositiveInt

from hf_eval.data.formats import quantize_fp8_e4m3_blocks
from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs
from hf_eval.families.common import first, randn, rng

#: How many of 128 slots each FP4 magnitude code 0..7 (0, 0.5, 1, 1.5, 2, 3, 4, 6) takes,
#: per sign: the code frequencies of N(0, 1) blocks of 32 quantised with the
#: ceil-to-power-of-two scale (11 % +-0, 21 % +-0.5, ..., 1.7 % +-6).
FP4_CODE_SLOTS = (14, 27, 24, 18, 19, 15, 9, 2)
#: How many of 256 slots each weight scale byte takes (UE8M0 exponents of N(0, 0.02) blocks).
SCALE_W_SLOTS = {119: 3, 120: 136, 121: 113, 122: 4}
#: Per-channel activation gains: this many channels per 640 are "massive activation" ones.
OUTLIERS_PER_640 = 1


def _nibble_table() -> np.ndarray:
    """256 slots -> FP4 code, positive codes then their negatives, by FP4_CODE_SLOTS."""
    magnitude = np.repeat(np.arange(8, dtype=np.uint8), FP4_CODE_SLOTS)
    return np.concatenate([magnitude, magnitude | np.uint8(8)])


def _byte_table() -> np.ndarray:
    """65536 entries: a uint16 draw -> one packed byte of two independent FP4 codes."""
    nibble = _nibble_table()
    draw = np.arange(65536)
    return (nibble[draw & 0xFF] | (nibble[draw >> 8] << 4)).astype(np.uint8)


def _scale_table() -> np.ndarray:
    """256 entries: a uint8 draw -> a UE8M0 weight scale byte, by SCALE_W_SLOTS."""
    table = np.concatenate([np.full(n, b, dtype=np.uint8) for b, n in SCALE_W_SLOTS.items()])
    assert table.size == 256
    return table


_BYTE_TABLE = _byte_table()
_SCALE_TABLE = _scale_table()


def expert_weights(definition: str, expert: int, n: int, k: int,
                   block: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """One expert's ``(Wq_packed [n, k/2], scale_W [n, k/block])`` int8, from its own streams.

    The streams depend only on (definition, input name, expert), so any expert can be
    regenerated alone and the weights are identical in every workload of the definition.
    """
    codes = rng(definition, "Wq_packed", expert).integers(0, 65536, size=(n, k // 2),
                                                           dtype=np.uint16)
    packed = _BYTE_TABLE[codes]
    draws = rng(definition, "scale_W", expert).integers(0, 256, size=(n, k // block),
                                                        dtype=np.uint8)
    scales = _SCALE_TABLE[draws]
    return torch.from_numpy(packed).view(torch.int8), torch.from_numpy(scales).view(torch.int8)


def shared_weights(definition: str, experts: int, n: int, k: int, block: int = 32,
                   only: list[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """All experts' ``(Wq_packed [E, n, k/2], scale_W [E, n, k/block])``, slab by slab.

    ``only`` (for tests) fills just those experts and leaves the others zero in lazily
    allocated memory, so a case's reads can be reproduced without gigabytes of RAM.
    """
    if only is not None:
        packed = torch.from_numpy(np.zeros((experts, n, k // 2), dtype=np.int8))
        scales = torch.from_numpy(np.zeros((experts, n, k // block), dtype=np.int8))
    else:
        packed = torch.empty((experts, n, k // 2), dtype=torch.int8)
        scales = torch.empty((experts, n, k // block), dtype=torch.int8)
    for expert in range(experts) if only is None else only:
        packed[expert], scales[expert] = expert_weights(definition, expert, n, k, block)
    return packed, scales


def expert_rows(params: dict, seed_parts: tuple,
                experts: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct experts, rows per expert) from explicit ``groups`` or a random draw."""
    if "groups" in params:
        pairs = sorted((int(e), int(r)) for e, r in params["groups"])
        chosen = np.array([e for e, _ in pairs], dtype=np.int64)
        counts = np.array([r for _, r in pairs], dtype=np.int64)
    else:
        total, active = int(params["rows"]), int(params["experts"])
        if not 1 <= active <= min(total, experts):
            raise ValueError(f"cannot spread {total} rows over {active} experts")
        gen = rng(*seed_parts, "routing")
        chosen = np.sort(gen.choice(experts, size=active, replace=False)).astype(np.int64)
        counts = 1 + gen.multinomial(total - active, gen.dirichlet(np.ones(active)))
    if len(set(chosen.tolist())) != len(chosen) or chosen.min() < 0 or chosen.max() >= experts:
        raise ValueError(f"experts must be distinct and in [0, {experts}): {chosen.tolist()}")
    if counts.min() < 1:
        raise ValueError("every listed expert needs at least one row")
    return chosen, counts


def activations(definition: str, seed: int, rows: int, k: int, act_std: float,
                row_sigma: float, block: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """Block-quantised model-like activations: ``(Aq float8_e4m3fn [rows, k], scale_A int8)``."""
    channels = rng(definition, "channel_gain")
    gain = channels.uniform(0.6, 1.4, size=k).astype(np.float32)
    outliers = channels.choice(k, size=max(1, k * OUTLIERS_PER_640 // 640), replace=False)
    gain[outliers] *= channels.uniform(8.0, 16.0, size=outliers.size).astype(np.float32)
    row_gain = rng(definition, seed, "row_gain").lognormal(0.0, row_sigma, size=(rows, 1))
    values = rng(definition, seed, "Aq").standard_normal((rows, k), dtype=np.float32)
    values *= gain * (row_gain.astype(np.float32) * np.float32(act_std))
    return quantize_fp8_e4m3_blocks(torch.from_numpy(values), block)


def generate_shaped(definition: str, params: dict, seed: int, experts: int, n: int, k: int,
                    block: int = 32, *, sparse_weights: bool = False,
                    lazy_weights: bool = False) -> dict[str, object]:
    """:func:`generate` for explicit constant axes (tests use tiny E, N, K).

    ``sparse_weights`` (for tests) materialises only the experts that receive rows, which
    are all a correct kernel reads; the other experts' bytes are zero instead of random.
    ``lazy_weights`` returns the two weight tensors as zero-argument callables (drawn once,
    on first call), so regenerating a small input never draws gigabytes of weights.
    """
    chosen, counts = expert_rows(params, (definition, seed), experts)
    expert_id = torch.from_numpy(np.repeat(chosen, counts).astype(np.int32))
    aq, scale_a = activations(definition, seed, int(counts.sum()), k,
                              float(params.get("act_std", 1.0)),
                              float(params.get("row_sigma", 0.5)), block)
    weights = functools.cache(lambda: shared_weights(
        definition, experts, n, k, block, only=chosen.tolist() if sparse_weights else None))
    if lazy_weights:
        return {"Aq": aq, "Wq_packed": lambda: weights()[0], "scale_A": scale_a,
                "scale_W": lambda: weights()[1], "expert_id": expert_id}
    return {"Aq": aq, "Wq_packed": weights()[0], "scale_A": scale_a, "scale_W": weights()[1],
            "expert_id": expert_id}


def constant_shape(definition: Definition) -> tuple[int, int, int, int]:
    """The definition's constant axes (E, N, K, block G): experts, output and reduction
    widths, and the quantisation block."""
    c = definition.const_axes
    return c["E"], c["N"], c["K"], c["G"]


def generate(definition: Definition, params: dict, seed: int) -> dict[str, object]:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed);
    the sizes are the definition's constant axes (:func:`constant_shape`)."""
    if definition.op_type != "grouped_gemm":
        raise ValueError(f"{definition.name!r} is not a grouped_gemm definition")
    experts, n, k, block = constant_shape(definition)
    return generate_shaped(definition.name, params, seed, experts, n, k, block,
                           lazy_weights=True)


# ------------------------------------------------------------------ value rules
#: UE8M0 byte 255 (NaN) read through the int8 carrier.
UE8M0_NAN_CARRIER = -1


def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a grouped GEMM workload; empty when valid."""
    problems = []
    expert_id = inputs["expert_id"].to(torch.int64)
    experts = inputs["Wq_packed"].shape[0]

    bad = (expert_id < 0) | (expert_id >= experts)
    if bool(bad.any()):
        problems.append(f"expert_id: every entry must be an expert in [0, {experts}); "
                        f"{int(bad.sum())} are not, first at row {first(bad)} = "
                        f"{int(expert_id[bad][0])}")
    if expert_id.numel() > 1:
        down = expert_id[1:] < expert_id[:-1]
        if bool(down.any()):
            row = int(down.nonzero()[0]) + 1
            problems.append(f"expert_id: must be non-decreasing (rows sorted by expert); "
                            f"{int(down.sum())} decreases, first at row {row}: "
                            f"{int(expert_id[row - 1])} then {int(expert_id[row])}")

    for name in ("scale_A", "scale_W"):
        bad = inputs[name] == UE8M0_NAN_CARRIER
        if bool(bad.any()):
            problems.append(f"{name}: UE8M0 byte 255 (NaN) is invalid; {int(bad.sum())} "
                            f"scales hold it, first at {first(bad)}")

    codes = inputs["Aq"].view(torch.uint8) & 0x7F
    bad = codes == 0x7F
    if bool(bad.any()):
        problems.append(f"Aq: FP8 E4M3 NaN codes (0x7F, 0xFF) are invalid; {int(bad.sum())} "
                        f"values hold one, first at {first(bad)}")
    return problems


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """How many distinct experts receive rows (default: all of them, at most one per row)."""

    model_config = ConfigDict(extra="forbid")
    experts_used: PositiveInt | None = None
    """How many distinct experts receive rows, capped at ``E`` and at ``M`` (at most one
    expert per row); None: all ``E``, within that cap."""


def _experts_used(d: Definition, axes: dict[str, int], s: BenchStructure) -> int:
    e = d.const_axes["E"]
    return min(e if s.experts_used is None else s.experts_used, e, axes["M"])


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """Random FP8 rows routed Zipf-like over ``experts_used`` experts, random FP4 weights
    and UE8M0 scales in the range real checkpoints use."""
    c = d.const_axes
    m, e, n, k, kb = axes["M"], c["E"], c["N"], c["K"], c["K_blocks"]
    used = _experts_used(d, axes, s)
    experts = torch.randperm(e, generator=gen, device=dev)[:used].sort().values
    weights = 1.0 / torch.arange(1, used + 1, device=dev, dtype=torch.float32)  # Zipf-like
    weights = weights[torch.randperm(used, generator=gen, device=dev)]
    extra = torch.multinomial(weights, m - used, replacement=True, generator=gen) \
        if m > used else torch.zeros(0, dtype=torch.int64, device=dev)
    counts = 1 + torch.bincount(extra, minlength=used)
    expert_id = torch.repeat_interleave(experts, counts).to(torch.int32)
    return {"Aq": randn(gen, (m, k), 1.0, torch.float32, dev).to(torch.float8_e4m3fn),
            "Wq_packed": torch.randint(-128, 128, (e, n, k // 2), generator=gen, device=dev,
                                       dtype=torch.int8),
            "scale_A": torch.randint(120, 128, (m, kb), generator=gen, device=dev,
                                     dtype=torch.int8),
            "scale_W": torch.randint(119, 123, (e, n, kb), generator=gen, device=dev,
                                     dtype=torch.int8),
            "expert_id": expert_id}


# ------------------------------------------------------------------ roofline counts
def experts_used(inputs: Inputs) -> int:
    """Distinct experts that receive at least one row."""
    return int(torch.unique(inputs["expert_id"]).numel())


def structure_counts(d: Definition, axes: dict[str, int], s: BenchStructure
                     ) -> dict[str, int]:
    """Every chosen expert gets at least one row in the benchmark inputs."""
    return {"experts_used": _experts_used(d, axes, s)}


FAMILY = Family(op_type="grouped_gemm", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, bench_structure=BenchStructure,
                counts={"experts_used": Count(("expert_id",), experts_used)},
                structure_counts=structure_counts)
