"""Sample generator of the qsa_attention family (Qwen "3.8" sparse GQA decode attention).

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
"""

from __future__ import annotations

import math

import numpy as np
import torch

from hf_eval.samples.common import rng

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


def generate(definition: str, params: dict,
             seed: int) -> dict[str, torch.Tensor | int | float | bool]:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    if definition != DEFINITION:
        raise ValueError(f"{definition!r} is not a qsa_attention definition")
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

    layout = rng(definition, seed, "page_table")
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

    select_gen = rng(definition, seed, "block_ids")
    block_ids = np.full((batch, TOPK), -1, dtype=np.int32)
    for b, (length, choice) in enumerate(zip(lengths, selection)):
        chosen = _select(select_gen, choice, length)
        block_ids[b, : chosen.size] = chosen

    structure = rng(definition, seed, "structure")
    k_gain = structure.uniform(0.6, 1.4, size=(KV_HEADS, DIM)).astype(np.float32)
    k_mean = structure.normal(0.0, 0.4, size=(KV_HEADS, DIM)).astype(np.float32)
    v_gain = structure.uniform(0.5, 1.5, size=(KV_HEADS, DIM)).astype(np.float32)
    v_mean = structure.normal(0.0, 0.5, size=(KV_HEADS, DIM)).astype(np.float32)
    head_temp = structure.uniform(0.7, 1.3, size=(HEADS, 1)).astype(np.float32)

    q_gen = rng(definition, seed, "Q")
    q = q_gen.standard_normal((batch, HEADS, DIM), dtype=np.float32) * (np.float32(2.5) * head_temp)

    def pool(name: str, gain: np.ndarray, mean: np.ndarray) -> torch.Tensor:
        """A page pool: stale values everywhere, then every request's tokens written."""
        stale = rng(definition, seed, name, "stale")
        values = stale.standard_normal((pool_pages, PAGE_SIZE, KV_HEADS, DIM),
                                       dtype=np.float32) * np.float32(3.0)
        tokens_gen = rng(definition, seed, name)
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
