"""Value rules of the qsa_index family (QSA indexer, decode) that shapes cannot express.

The indexer reads block j < num_complete_blocks[b] of request b at
``Kc_pages[page_table[b, j // 64], j % 64]``; everything else (page-table entries past the
last needed logical page, slots past the last complete block, pages of other requests) is
ignored by the contract and may hold stale values. So only what is read is checked: the
count fits the page table, the page table names real pages (or -1), every logical page
that holds a complete block is mapped, and the values read are finite (a NaN score has
no rank).
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import non_finite, page_table_range, violation


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
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
