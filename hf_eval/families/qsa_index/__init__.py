"""The qsa_index family (Qwen "3.8" sparse-attention indexer, decode).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params (all optional except ``num_complete_blocks``):

- ``num_complete_blocks``: list of ints, one per request (the batch size is its length);
- ``modes``: list of ``"normal"`` / ``"zero"`` / ``"relu_ties"`` / ``"near_duplicate"`` per
  request (default all ``"normal"``).
  ``"zero"`` stores all-zero keys, so every score is exactly 0 in any arithmetic and the
  lower-ID tie rule alone decides the selection.
  ``"relu_ties"`` makes most keys point against the (correlated) query heads, so all four
  dot products are clearly negative and those blocks score exactly 0 after the ReLU; fewer
  than 512 blocks score above 0, so the 512th place falls inside a large exact tie, as
  ReLU makes it happen in a real indexer.
  ``"near_duplicate"`` (more than 512 blocks) copies the last selected block's key onto a
  lower, unselected block and lowers one channel by one bf16 step, so the copy scores at
  least 0.02 below: FP32 separates the two, bf16 scores tie them and the tie rule then
  picks the wrong block (repeated text gives near-identical compressed keys in a real
  cache);
- ``page_order``: ``"shuffled"`` (default; physical pages are a random permutation of the
  pool) or ``"identity"`` (request pages allocated in order);
- ``spare_pages`` (default 2): pool pages owned by no request, filled with stale values;
- ``extra_columns`` (default 1): page-table columns beyond the widest request;
- ``stale_tail`` (default False): page-table entries past a request's last needed page
  hold stale (valid but meaningless) page IDs instead of -1.

Structure: the four index heads of a request share a common direction (heads of one layer
are correlated), keys have per-channel gains like a normalised projection, and every slot
that no request may read (spare pages, slots at or past ``num_complete_blocks`` in a
request's last page) holds larger stale values, so a kernel that reads them selects
differently.

Near ties: the reference scores in FP64; an FP32 kernel rounds. Every request with more
than 512 blocks is checked (``selection_is_robust``) so that no FP32 rounding can move a
block across the 512th place; only exact ties (score exactly 0 in any arithmetic) may
straddle it, and those are decided by the lower-ID rule. A draw that fails the check is
redrawn from the same stream (deterministically). There are no layer weights in this
family, so every tensor depends on the case seed.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

The indexer reads block j < num_complete_blocks[b] of request b at
``Kc_pages[page_table[b, j // 64], j % 64]``; everything else (page-table entries past the
last needed logical page, slots past the last complete block, pages of other requests) is
ignored by the contract and may hold stale values. So only what is read is checked: the
count fits the page table, the page table names real pages (or -1), every logical page
that holds a complete block is mapped, and the values read are finite (a NaN score has
no rank).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs
from hf_eval.families.common import (
    non_finite,
    page_table,
    page_table_range,
    randn,
    rng,
    violation,
)

#: Constant axes of the single definition of the family.
DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
HEADS, DIM, PAGE_SIZE, TOPK = 4, 128, 64, 512

#: Relative bound used for the FP32 rounding of one dot product: a recursive FP32 sum of
#: 128 products errs by at most 127 * 2**-24 (about 7.6e-6) times the sum of |products|;
#: 2e-5 leaves room for any summation order and for the head sum.
FP32_DOT_BOUND = 2e-5

MAX_REDRAWS = 50

#: Least score gap planted by the ``near_duplicate`` mode: above the FP32 bounds of two
#: scores of that size (``selection_is_robust`` checks it), below bf16 spacing there.
NEAR_DUPLICATE_GAP = 0.02


def score_intervals(q: torch.Tensor, keys: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FP64 scores of ``keys`` [n, D] against ``q`` [H, D], the FP32 error bound of each
    (``FP32_DOT_BOUND`` times its dot products' absolute sums) and which blocks score
    exactly 0 in any arithmetic (every dot product negative beyond its bound, or all of
    its products zero)."""
    q64, k64 = q.double(), keys.double()
    dots = k64 @ q64.T                                   # [n, H]
    bound = FP32_DOT_BOUND * (k64.abs() @ q64.abs().T)   # [n, H]
    exact_zero = ((dots + bound < 0) | (bound == 0)).all(dim=1)
    return torch.relu(dots).sum(dim=1), bound.sum(dim=1), exact_zero


def selection_is_robust(q: torch.Tensor, keys: torch.Tensor, topk: int = TOPK) -> bool:
    """True when FP32 rounding of any kernel cannot change the selected set of one request.

    ``q`` is ``[H, D]``, ``keys`` ``[n, D]`` (the bf16 values, any float dtype). Each
    score gets an interval ``[s - u, s + u]`` with ``u`` the FP32 error bound of its dot
    products; a block whose four dot products are negative beyond their bound (or whose
    products are all zero) scores exactly 0 in any arithmetic and is a point ``[0, 0]``.
    The selection is robust when every selected interval lies above every unselected one,
    except pairs of exact zeros, which the lower-ID rule orders the same way everywhere.
    """
    n = keys.shape[0]
    if n <= topk:
        return True
    scores, slack, exact_zero = score_intervals(q, keys)
    order = torch.sort(-scores, stable=True).indices
    selected = torch.zeros(n, dtype=torch.bool)
    selected[order[:topk]] = True

    def lowest(mask: torch.Tensor) -> float:
        return float((scores - slack)[mask].min()) if bool(mask.any()) else math.inf

    def highest(mask: torch.Tensor) -> float:
        return float((scores + slack)[mask].max()) if bool(mask.any()) else -math.inf

    sel_fuzzy, unsel_fuzzy = selected & ~exact_zero, ~selected & ~exact_zero
    sel_zero, unsel_zero = selected & exact_zero, ~selected & exact_zero
    if lowest(sel_fuzzy) <= highest(unsel_fuzzy):
        return False
    if bool(unsel_zero.any()) and lowest(sel_fuzzy) <= 0.0:
        return False
    return not (bool(sel_zero.any()) and bool(unsel_fuzzy.any()))


def _bf16(values: np.ndarray) -> torch.Tensor:
    """Round float32 values to bf16 (round-to-nearest-even)."""
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(torch.bfloat16)


def _draw_keys(gen: np.random.Generator, mode: str, n: int, q: np.ndarray,
               gain: np.ndarray) -> np.ndarray:
    """Keys ``[n, D]`` (float32) of one request in the requested mode."""
    if mode == "zero":
        return np.zeros((n, DIM), dtype=np.float32)
    keys = gen.standard_normal((n, DIM), dtype=np.float32) * gain
    if mode == "normal":
        return keys
    if mode == "relu_ties":
        # About 30 % of the blocks stay generic (some of those score 0 too); the others
        # point against the heads' shared direction so all four dot products are negative.
        direction = q.mean(axis=0)
        direction = direction / np.linalg.norm(direction)
        against = gen.random(n) >= 0.3
        keys[against] = keys[against] * np.float32(0.25) - np.float32(3.0) * direction
        return keys
    if mode == "near_duplicate":
        return keys
    raise ValueError(f"unknown key mode {mode!r}")


def _bf16_step_down(values: np.ndarray) -> np.ndarray:
    """The next bf16 value below each of ``values`` (which must be bf16 values)."""
    bits = _bf16(values).view(torch.int16).numpy().astype(np.int32)
    bits = np.where(values > 0, bits - 1, np.where(values < 0, bits + 1, -32767))
    return torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16).float().numpy()


def _plant_near_duplicate(q: torch.Tensor, keys: np.ndarray) -> np.ndarray | None:
    """Copy the last selected block's key onto a lower, unselected block, scored just below.

    ``keys`` hold bf16 values. The copy is lowered by one bf16 step in the channel that
    makes its score drop by the smallest amount of at least ``NEAR_DUPLICATE_GAP``: FP32
    separates the two blocks, while their dot products rounded to bf16 are equal (checked),
    so a kernel with bf16 scores sees a tie and the lower-ID rule picks the wrong block.
    Returns None when no such plant exists for this draw (the caller redraws).
    """
    q64 = q.double().numpy()
    dots = keys.astype(np.float64) @ q64.T
    scores = np.maximum(dots, 0.0).sum(axis=1)
    order = np.lexsort((np.arange(len(scores)), -scores))
    last = int(order[TOPK - 1])
    lower = np.sort(order[TOPK:])
    lower = lower[lower < last]
    if lower.size == 0:
        return None
    influence = q64[dots[last] > 0].sum(axis=0)
    stepped = _bf16_step_down(keys[last])
    drop = (keys[last] - stepped) * influence
    fits = np.flatnonzero(drop >= NEAR_DUPLICATE_GAP)
    if fits.size == 0:
        return None
    channel = int(fits[np.argmin(drop[fits])])
    copy = keys[last].copy()
    copy[channel] = stepped[channel]
    copy_dots = copy.astype(np.float64) @ q64.T
    rounded = [torch.from_numpy(np.maximum(d, 0.0)).to(torch.bfloat16) for d in
               (dots[last], copy_dots)]
    if not torch.equal(rounded[0], rounded[1]):
        return None
    planted = keys.copy()
    planted[int(lower[len(lower) // 2])] = copy
    return planted


def generate(definition: Definition, params: dict,
             seed: int) -> dict[str, torch.Tensor | int | float | bool]:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    name = definition.name
    if name != DEFINITION:
        raise ValueError(f"{name!r} is not a qsa_index definition")
    blocks = [int(n) for n in params["num_complete_blocks"]]
    batch = len(blocks)
    modes = list(params.get("modes", ["normal"] * batch))
    if batch < 1 or len(modes) != batch or min(blocks) < 0:
        raise ValueError("num_complete_blocks must be a non-empty list of counts >= 0, "
                         "with one mode per request")
    spare = int(params.get("spare_pages", 2))
    extra_columns = int(params.get("extra_columns", 1))
    stale_tail = bool(params.get("stale_tail", False))
    page_order = params.get("page_order", "shuffled")

    pages_needed = [math.ceil(n / PAGE_SIZE) for n in blocks]
    max_pages = max(1, max(pages_needed) + extra_columns)
    pool_pages = max(1, sum(pages_needed) + spare)

    layout = rng(name, seed, "page_table")
    if page_order == "shuffled":
        physical = layout.permutation(pool_pages)
    elif page_order == "identity":
        physical = np.arange(pool_pages)
    else:
        raise ValueError(f"unknown page_order {page_order!r}")
    page_table = np.full((batch, max_pages), -1, dtype=np.int32)
    owned: list[np.ndarray] = []
    start = 0
    for b, count in enumerate(pages_needed):
        owned.append(physical[start:start + count])
        page_table[b, :count] = owned[-1]
        start += count
        if stale_tail:
            page_table[b, count:] = layout.integers(0, pool_pages, size=max_pages - count)

    structure = rng(name, seed, "structure")
    gain = np.exp(structure.normal(0.0, 0.3, size=DIM)).astype(np.float32)
    q_gen = rng(name, seed, "Q_idx")
    shared = q_gen.standard_normal((batch, 1, DIM), dtype=np.float32)
    q_f32 = (np.float32(0.6) * shared
             + np.float32(0.8) * q_gen.standard_normal((batch, HEADS, DIM), dtype=np.float32))
    q_idx = _bf16(q_f32)

    stale = rng(name, seed, "stale")
    pool = stale.standard_normal((pool_pages, PAGE_SIZE, DIM), dtype=np.float32)
    pool *= np.float32(2.5)
    k_gen = rng(name, seed, "Kc_pages")
    for b, n in enumerate(blocks):
        for _ in range(MAX_REDRAWS):
            keys = _bf16(_draw_keys(k_gen, modes[b], n, q_f32[b], gain)).float().numpy()
            if modes[b] == "near_duplicate" and n > TOPK:
                keys = _plant_near_duplicate(q_idx[b], keys)
                if keys is None:
                    continue
            if selection_is_robust(q_idx[b], torch.from_numpy(keys)):
                break
        else:
            raise RuntimeError(f"request {b}: no acceptable draw in {MAX_REDRAWS} (near tie at "
                               "the 512th place, or no near duplicate to plant)")
        slots = np.arange(n)
        pool[owned[b][slots // PAGE_SIZE], slots % PAGE_SIZE] = keys

    return {
        "Q_idx": q_idx,
        "Kc_pages": _bf16(pool),
        "page_table": torch.from_numpy(page_table),
        "num_complete_blocks": torch.tensor(blocks, dtype=torch.int32),
    }


# ------------------------------------------------------------------ value rules
def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a QSA indexer workload; empty when valid."""
    problems: list[str] = []
    q = inputs["Q_idx"]
    pool = inputs["Kc_pages"]
    page_table = inputs["page_table"].to(device="cpu", dtype=torch.int64)
    counts = inputs["num_complete_blocks"].to(device="cpu", dtype=torch.int64)
    num_pages, page_size = pool.shape[0], pool.shape[1]
    capacity = page_table.shape[1] * page_size

    problems += violation("num_complete_blocks", f"every entry must be within [0, MaxP * "
                          f"page_size] = [0, {capacity}]", (counts < 0) | (counts > capacity),
                          counts)
    problems += page_table_range(page_table, num_pages)

    needed_pages = (counts.clamp(0, capacity) + page_size - 1) // page_size
    logical = torch.arange(page_table.shape[1])
    needed = logical[None, :] < needed_pages[:, None]
    problems += violation("page_table", f"every logical page holding a complete block "
                          f"(j // {page_size} for j < num_complete_blocks) must be mapped",
                          needed & (page_table == -1), counted="are -1")

    problems += non_finite("Q_idx", q)

    # Keys that are read: complete blocks on mapped, in-range pages.
    readable = needed & (page_table >= 0) & (page_table < num_pages)
    rows, cols = readable.nonzero(as_tuple=True)
    if rows.numel():
        keys = pool.cpu()[page_table[rows, cols]]                   # [pages, page_size, D]
        slot = cols[:, None] * page_size + torch.arange(page_size)[None, :]
        read = slot < counts[rows][:, None]
        bad_keys = read & ~torch.isfinite(keys).all(dim=2)
        if bool(bad_keys.any()):
            i, s = (int(x) for x in bad_keys.nonzero()[0])
            problems.append(f"Kc_pages: every key of a complete block must be finite; "
                            f"{int(bad_keys.sum())} are not, first is block "
                            f"{int(cols[i]) * page_size + s} of request {int(rows[i])} "
                            f"(page {int(page_table[rows[i], cols[i]])}, slot {s})")
    return problems


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """Complete blocks of every request (capped by its page-table capacity)."""

    model_config = ConfigDict(extra="forbid")
    num_complete_blocks: NonNegativeInt
    """Every request's number of complete blocks, capped at ``MaxP`` × ``page_size``."""


def _blocks(d: Definition, axes: dict[str, int], s: BenchStructure) -> int:
    return min(s.num_complete_blocks, axes["MaxP"] * d.const_axes["page_size"])


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """Random queries and keys; distinct shuffled pages per request."""
    c = d.const_axes
    b, p, maxp = axes["B"], axes["P"], axes["MaxP"]
    blocks = _blocks(d, axes, s)
    return {"Q_idx": randn(gen, (b, c["H"], c["D"]), device=dev),
            "Kc_pages": randn(gen, (p, c["page_size"], c["D"]), device=dev),
            "page_table": page_table(gen, b, maxp, p, dev),
            "num_complete_blocks": torch.full((b,), blocks, dtype=torch.int32, device=dev)}


# ------------------------------------------------------------------ roofline counts
def blocks(inputs: Inputs) -> int:
    """Complete blocks scored over the batch."""
    return int(inputs["num_complete_blocks"].to(torch.int64).clamp_min(0).sum())


def structure_counts(d: Definition, axes: dict[str, int], s: BenchStructure
                     ) -> dict[str, int]:
    return {"blocks": axes["B"] * _blocks(d, axes, s)}


# ------------------------------------------------------------------ judging drawn content
def allowed_selection(q: torch.Tensor, keys: torch.Tensor, ids: torch.Tensor) -> bool:
    """True when ``ids`` (one request's output row) is a top-TOPK selection that FP32
    rounding of some kernel explains: TOPK distinct block IDs below ``n`` in ascending
    order, no unchosen block certainly above a chosen one (score intervals as in
    :func:`score_intervals`), and among blocks scoring exactly 0 the lowest IDs chosen."""
    n = keys.shape[0]
    ids = ids.long()
    if ids.numel() != TOPK or not bool(((ids >= 0) & (ids < n)).all()):
        return False
    if not bool((ids[1:] > ids[:-1]).all()):
        return False
    scores, slack, exact_zero = score_intervals(q, keys)
    chosen = torch.zeros(n, dtype=torch.bool)
    chosen[ids] = True
    low = torch.where(exact_zero, 0.0, scores - slack)
    high = torch.where(exact_zero, 0.0, scores + slack)
    if bool((~chosen).any()) and float(low[~chosen].max()) > float(high[chosen].min()):
        return False
    zero_ids = torch.nonzero(exact_zero).flatten()
    zero_chosen = chosen[zero_ids]
    # Exact zeros tie in any arithmetic: the chosen ones must be the lowest IDs of them.
    return bool((zero_chosen[:-1] >= zero_chosen[1:]).all()) if zero_ids.numel() > 1 else True


def undecided_rows(inputs: list[object], outputs: tuple[torch.Tensor, ...],
                   rows: torch.Tensor) -> torch.Tensor:
    """Requests of drawn content, of those marked in ``rows``, whose selection the
    definition leaves open, and where ``outputs`` chose an answer it allows there
    (:func:`allowed_selection`). Open: the request fails the definition's own validity
    rule, :func:`selection_is_robust` (a score near the 512th place closer than FP32
    rounding allows, so two correct FP32 kernels, or a kernel and the FP32 baseline that
    is the truth at benchmark shapes, may choose differently: seen on the H200 at
    b64_ctx32k, results/h200/2026-12-02-1036-adversarial-library-pairs/). Every sample
    passes that rule by construction, and exact ties keep the lower-ID rule."""
    q, pool, table, counts = inputs[:4]
    ids = outputs[0]
    if ids.shape != (q.shape[0], TOPK):
        return torch.zeros(q.shape[0], dtype=torch.bool)
    settled = []
    for b, n in enumerate(counts.tolist()):
        if n <= TOPK or not bool(rows[b]):
            settled.append(False)
            continue
        slots = torch.arange(n, device=table.device)
        pages = table[b, slots // PAGE_SIZE].long()
        keys = pool[pages.to(pool.device), (slots % PAGE_SIZE).to(pool.device)].cpu()
        row_q = q[b].cpu()
        settled.append(not selection_is_robust(row_q, keys)
                       and allowed_selection(row_q, keys, ids[b].cpu()))
    return torch.tensor(settled, dtype=torch.bool)


FAMILY = Family(op_type="qsa_index", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, bench_structure=BenchStructure,
                counts={"blocks": Count(("num_complete_blocks",), blocks)},
                structure_counts=structure_counts, undecided_rows=undecided_rows)
