"""Value rules of the qsa_attention family (QSA sparse GQA decode) that shapes cannot express.

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

import torch

from hf_eval.rules.common import first, non_finite, page_table_range, violation

BLOCK = 4


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


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
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
