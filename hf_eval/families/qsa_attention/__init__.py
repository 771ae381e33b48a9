"""The qsa_attention family (Qwen "3.8" sparse GQA decode attention).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params (``context_lens`` required):

- ``context_lens``: list of ints >= 1, one per request (the batch size is its length);
  each includes the current token, whose K/V are already in the cache;
- ``selection``: per request, ``"all"`` (every complete block, as the indexer returns
  when there are at most 512), ``"none"`` (no block: only the trailing tokens are
  visible) or an int ``k`` (``k`` distinct complete blocks drawn at random, ascending;
  the last complete block is always among them when ``context_lens`` is a multiple of 4,
  so that the current token stays visible). Default ``"all"``;
- ``page_order``: ``"shuffled"`` (default) or ``"identity"``;
- ``spare_pages`` (default 1): pool pages no request owns, holding stale values;
- ``extra_columns`` (default 1): page-table columns beyond the widest request (-1);
- ``shared_prefix_pages`` (default 0): request 1's first logical pages map to the same
  physical pages as request 0's (prefix sharing); request 0 must fill them completely.

Values imitate a QK-normalised model: keys carry per-channel gains and a per-head mean
direction, values have per-channel offsets (so outputs are not near zero), queries are
scaled so that logits have a standard deviation of about 2.5 (a peaked softmax in which
the chosen tokens matter). Every slot no request may read (spare pages, slots at or past
``context_lens`` in a request's last page) holds larger stale values, and the unselected
blocks hold ordinary values, so a kernel that attends to the wrong tokens fails the
tolerance. There are no layer weights in this family; everything depends on the seed.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

Request b has ``L = context_lens[b]`` tokens (the current one included) and ``C = L // 4``
complete blocks. It attends to the 4 tokens of every valid ``block_ids`` entry and to the
trailing tokens ``4C .. L-1``. The rules make that set well defined and readable:

- ``context_lens`` in ``[1, MaxP * page_size]`` (a decode step always has its token);
- page-table entries -1 or a page in ``[0, P)``; every logical page of ``[0, L)`` mapped;
- ``block_ids[b]``: valid entries first, strictly ascending, each a complete block
  (``0 <= j < C``), then only -1; so a selected block never overlaps the trailing tokens;
- at least one visible token (``L % 4 != 0`` or one selected block): with ``L % 4 == 0``
  the current token is the last of block ``C - 1`` and no trailing token exists;
- the values read (Q and the K/V rows of visible tokens) are finite.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, PositiveInt

from hf_eval.data.schema import Definition
from hf_eval.families.base import Count, Family, Inputs
from hf_eval.families.common import (
    first,
    non_finite,
    page_table,
    page_table_range,
    randn,
    rng,
    violation,
)

#: The single definition of the family and its constant axes.
DEFINITION = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
HEADS, KV_HEADS, DIM, PAGE_SIZE, TOPK, BLOCK = 24, 2, 256, 64, 512, 4


def _bf16(values: np.ndarray) -> torch.Tensor:
    """Round float32 values to bf16 (round-to-nearest-even)."""
    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(torch.bfloat16)


def _select(gen: np.random.Generator, choice: object, length: int) -> np.ndarray:
    """Ascending selected block IDs of one request for a ``selection`` entry."""
    complete = length // BLOCK
    if choice == "all":
        if complete > TOPK:
            raise ValueError(f"'all' needs at most {TOPK} complete blocks, got {complete}")
        return np.arange(complete)
    if choice == "none":
        return np.zeros(0, dtype=np.int64)
    count = int(choice)
    if not 0 <= count <= min(TOPK, complete):
        raise ValueError(f"cannot select {count} of {complete} complete blocks")
    if count and length % BLOCK == 0:
        # The current token closes block complete - 1: keep it visible.
        rest = gen.choice(complete - 1, size=count - 1, replace=False)
        return np.sort(np.append(rest, complete - 1))
    return np.sort(gen.choice(complete, size=count, replace=False))


def generate(definition: Definition, params: dict,
             seed: int) -> dict[str, torch.Tensor | int | float | bool]:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    definition_name = definition.name
    if definition_name != DEFINITION:
        raise ValueError(f"{definition_name!r} is not a qsa_attention definition")
    lengths = [int(n) for n in params["context_lens"]]
    batch = len(lengths)
    selection = list(params.get("selection", ["all"] * batch))
    if batch < 1 or len(selection) != batch or min(lengths) < 1:
        raise ValueError("context_lens must be a non-empty list of lengths >= 1, "
                         "with one selection per request")
    spare = int(params.get("spare_pages", 1))
    extra_columns = int(params.get("extra_columns", 1))
    shared = int(params.get("shared_prefix_pages", 0))
    page_order = params.get("page_order", "shuffled")

    pages_needed = [math.ceil(n / PAGE_SIZE) for n in lengths]
    if shared and (batch < 2 or shared > pages_needed[1] or shared * PAGE_SIZE > lengths[0]):
        raise ValueError("shared_prefix_pages needs request 0 to fill that many pages "
                         "and request 1 to use them")
    # Shared pages are allocated once: request 1 owns only its pages past the prefix.
    owned_counts = list(pages_needed)
    if shared:
        owned_counts[1] -= shared
    max_pages = max(pages_needed) + extra_columns
    pool_pages = sum(owned_counts) + spare

    layout = rng(definition_name, seed, "page_table")
    if page_order == "shuffled":
        physical = layout.permutation(pool_pages)
    elif page_order == "identity":
        physical = np.arange(pool_pages)
    else:
        raise ValueError(f"unknown page_order {page_order!r}")
    page_table = np.full((batch, max_pages), -1, dtype=np.int32)
    start = 0
    for b, count in enumerate(owned_counts):
        first = shared if (b == 1 and shared) else 0
        page_table[b, first:first + count] = physical[start:start + count]
        start += count
    if shared:
        page_table[1, :shared] = page_table[0, :shared]

    select_gen = rng(definition_name, seed, "block_ids")
    block_ids = np.full((batch, TOPK), -1, dtype=np.int32)
    for b, (length, choice) in enumerate(zip(lengths, selection)):
        chosen = _select(select_gen, choice, length)
        block_ids[b, : chosen.size] = chosen

    structure = rng(definition_name, seed, "structure")
    k_gain = structure.uniform(0.6, 1.4, size=(KV_HEADS, DIM)).astype(np.float32)
    k_mean = structure.normal(0.0, 0.4, size=(KV_HEADS, DIM)).astype(np.float32)
    v_gain = structure.uniform(0.5, 1.5, size=(KV_HEADS, DIM)).astype(np.float32)
    v_mean = structure.normal(0.0, 0.5, size=(KV_HEADS, DIM)).astype(np.float32)
    head_temp = structure.uniform(0.7, 1.3, size=(HEADS, 1)).astype(np.float32)

    q_gen = rng(definition_name, seed, "Q")
    q = q_gen.standard_normal((batch, HEADS, DIM), dtype=np.float32) * (np.float32(2.5) * head_temp)

    def pool(name: str, gain: np.ndarray, mean: np.ndarray) -> torch.Tensor:
        """A page pool: stale values everywhere, then every request's tokens written."""
        stale = rng(definition_name, seed, name, "stale")
        values = stale.standard_normal((pool_pages, PAGE_SIZE, KV_HEADS, DIM),
                                       dtype=np.float32) * np.float32(3.0)
        tokens_gen = rng(definition_name, seed, name)
        for b, length in enumerate(lengths):
            first = shared * PAGE_SIZE if (b == 1 and shared) else 0
            count = length - first
            if count <= 0:
                continue
            tokens = np.arange(first, length)
            data = tokens_gen.standard_normal((count, KV_HEADS, DIM), dtype=np.float32)
            values[page_table[b, tokens // PAGE_SIZE], tokens % PAGE_SIZE] = data * gain + mean
        return _bf16(values)

    return {
        "Q": _bf16(q),
        "K_pages": pool("K_pages", k_gain, k_mean),
        "V_pages": pool("V_pages", v_gain, v_mean),
        "page_table": torch.from_numpy(page_table),
        "block_ids": torch.from_numpy(block_ids),
        "context_lens": torch.tensor(lengths, dtype=torch.int32),
    }


# ------------------------------------------------------------------ value rules
def _visible_slots(page_table: torch.Tensor, block_ids: torch.Tensor, lengths: torch.Tensor,
                   page_size: int, num_pages: int) -> torch.Tensor:
    """Physical slots (page * page_size + offset) of every readable visible token."""
    slots = []
    for b in range(block_ids.shape[0]):
        length = int(lengths[b])
        ids = block_ids[b][(block_ids[b] >= 0) & (block_ids[b] < length // BLOCK)]
        tokens = torch.cat([(ids[:, None] * BLOCK + torch.arange(BLOCK)).flatten(),
                            torch.arange(length // BLOCK * BLOCK, length)])
        tokens = tokens[tokens // page_size < page_table.shape[1]]
        pages = page_table[b, tokens // page_size]
        ok = (pages >= 0) & (pages < num_pages)
        slots.append(pages[ok] * page_size + tokens[ok] % page_size)
    return torch.cat(slots) if slots else torch.zeros(0, dtype=torch.int64)


def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a QSA sparse attention workload."""
    problems: list[str] = []
    q = inputs["Q"]
    k_pages, v_pages = inputs["K_pages"], inputs["V_pages"]
    page_table = inputs["page_table"].to(device="cpu", dtype=torch.int64)
    block_ids = inputs["block_ids"].to(device="cpu", dtype=torch.int64)
    lengths = inputs["context_lens"].to(device="cpu", dtype=torch.int64)
    num_pages, page_size = k_pages.shape[0], k_pages.shape[1]
    capacity = page_table.shape[1] * page_size

    problems += violation("context_lens", f"every entry must be within [1, MaxP * page_size] "
                          f"= [1, {capacity}] (the current token is always in the cache)",
                          (lengths < 1) | (lengths > capacity), lengths)

    problems += page_table_range(page_table, num_pages)

    needed_pages = (lengths.clamp(0, capacity) + page_size - 1) // page_size
    needed = torch.arange(page_table.shape[1])[None, :] < needed_pages[:, None]
    problems += violation("page_table", f"every logical page of the context (t // {page_size} "
                          f"for t < context_lens) must be mapped", needed & (page_table == -1),
                          counted="are -1")

    complete = (lengths // BLOCK)[:, None]
    valid = block_ids != -1
    problems += violation("block_ids", f"every entry must be -1 or a complete block ID in "
                          f"[0, context_lens // {BLOCK})",
                          valid & ((block_ids < 0) | (block_ids >= complete)), block_ids)
    bad = torch.zeros_like(valid)
    bad[:, 1:] = valid[:, 1:] & ~valid[:, :-1]
    if bool(bad.any()):
        problems.append(f"block_ids: -1 may only pad the end of a row (valid IDs first); "
                        f"{int(bad.any(dim=1).sum())} rows have an ID after a -1, first at "
                        f"{first(bad)}")
    bad = torch.zeros_like(valid)
    bad[:, 1:] = valid[:, 1:] & valid[:, :-1] & (block_ids[:, 1:] <= block_ids[:, :-1])
    problems += violation("block_ids", "valid IDs must be strictly ascending (no repeats)", bad,
                          block_ids)

    empty = (lengths % BLOCK == 0) & ~valid.any(dim=1) & (lengths >= 1)
    if bool(empty.any()):
        problems.append(f"block_ids/context_lens: every request needs a visible token (the "
                        f"current token: context_lens % {BLOCK} != 0 or a selected block); "
                        f"{int(empty.sum())} requests have none, first is request "
                        f"{int(empty.nonzero()[0, 0])}")

    problems += non_finite("Q", q)
    slots = _visible_slots(page_table, block_ids, lengths, page_size, num_pages)
    for name, pool in (("K_pages", k_pages), ("V_pages", v_pages)):
        rows = pool.cpu().reshape(num_pages * page_size, -1)[slots]
        bad_rows = ~torch.isfinite(rows).all(dim=1)
        if bool(bad_rows.any()):
            slot = int(slots[bad_rows][0])
            problems.append(f"{name}: the K/V of every visible token must be finite; "
                            f"{int(bad_rows.sum())} rows are not, first at page "
                            f"{slot // page_size}, slot {slot % page_size}")
    return problems


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """Every request's context length (capped by its page-table capacity)."""

    model_config = ConfigDict(extra="forbid")
    context_len: PositiveInt
    """Every request's context length in tokens, capped at ``MaxP`` × ``page_size``."""


def _context(d: Definition, axes: dict[str, int], s: BenchStructure) -> int:
    return min(s.context_len, axes["MaxP"] * d.const_axes["page_size"])


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """Random pages; each request selects min(top-k, its complete blocks) blocks."""
    c = d.const_axes
    b, p, maxp, ps, topk = axes["B"], axes["P"], axes["MaxP"], c["page_size"], c["topk"]
    ctx = _context(d, axes, s)
    complete = ctx // 4
    pick = torch.rand((b, complete), generator=gen, device=dev).argsort(dim=1)[:, :topk]
    block_ids = pick.sort(dim=1).values.to(torch.int32)
    if complete < topk:
        pad = torch.full((b, topk - complete), -1, dtype=torch.int32, device=dev)
        block_ids = torch.cat([block_ids, pad], dim=1)
    shape = (p, ps, c["KV"], c["D"])
    return {"Q": randn(gen, (b, c["H"], c["D"]), device=dev),
            "K_pages": randn(gen, shape, device=dev), "V_pages": randn(gen, shape, device=dev),
            "page_table": page_table(gen, b, maxp, p, dev), "block_ids": block_ids,
            "context_lens": torch.full((b,), ctx, dtype=torch.int32, device=dev)}


# ------------------------------------------------------------------ roofline counts
def tokens(inputs: Inputs) -> int:
    """Visible tokens over the batch: 4 per selected complete block, plus the trailing."""
    ctx = inputs["context_lens"].to("cpu", torch.int64)
    ids = inputs["block_ids"].to("cpu", torch.int64)
    complete = (ctx // 4)[:, None]
    selected = ((ids >= 0) & (ids < complete)).sum()
    return int(4 * selected + (ctx % 4).sum())


def structure_counts(d: Definition, axes: dict[str, int], s: BenchStructure
                     ) -> dict[str, int]:
    ctx = _context(d, axes, s)
    return {"tokens": axes["B"] * (4 * min(d.const_axes["topk"], ctx // 4) + ctx % 4)}


FAMILY = Family(op_type="qsa_attention", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, bench_structure=BenchStructure,
                counts={"tokens": Count(("block_ids", "context_lens"), tokens)},
                structure_counts=structure_counts)
