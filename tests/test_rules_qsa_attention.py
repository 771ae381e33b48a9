"""Value rules of the QSA sparse GQA decode: each rule violated once.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

from collections.abc import Callable

import torch

from hf_eval.families import qsa_attention
from hf_eval.families import qsa_attention as rules
from tests import kit

NAME = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
CASES = kit.cases(NAME)


def _valid() -> dict:
    """Request 0: L = 202 (50 complete blocks, 20 selected, 2 trailing tokens);
    request 1: L = 100 (25 complete blocks, all selected, no trailing token)."""
    return qsa_attention.generate(kit.definition(NAME),
                                  {"context_lens": [202, 100], "selection": [20, "all"]}, 9)


def _length_zero(x: dict) -> None:
    x["context_lens"][0] = 0
    x["block_ids"][0] = -1          # keep the block rule quiet: no block is complete


def _length_over_capacity(x: dict) -> None:
    width = x["page_table"].shape[1]
    x["page_table"][1] = torch.arange(width, dtype=torch.int32) % x["K_pages"].shape[0]
    x["context_lens"][1] = x["page_table"].shape[1] * 64 + 1


def _page_out_of_range(x: dict) -> None:
    x["page_table"][1, -1] = x["K_pages"].shape[0] + 4


def _needed_page_unmapped(x: dict) -> None:
    x["page_table"][0, 3] = -1      # tokens 192..201 of request 0


def _block_not_complete(x: dict) -> None:
    x["block_ids"][1, 24] = 25      # L = 100: block 25 would be tokens 100..103


def _hole_in_block_ids(x: dict) -> None:
    x["block_ids"][0, 25] = 49      # after the -1 that ends the 20 valid entries


def _not_ascending(x: dict) -> None:
    x["block_ids"][1, 3], x["block_ids"][1, 4] = x["block_ids"][1, 4].clone(), \
        x["block_ids"][1, 3].clone()


def _no_visible_token(x: dict) -> None:
    x["block_ids"][1] = -1          # L = 100 is a multiple of 4: nothing left to see


def _nan_query(x: dict) -> None:
    x["Q"][0, 23, 255] = float("nan")


def _inf_visible_value(x: dict) -> None:
    page = int(x["page_table"][0, 3])
    x["V_pages"][page, 201 - 192, 1, 0] = float("inf")   # the current token of request 0


VIOLATIONS: list[tuple[Callable[[dict], None], str, str]] = [
    (_length_zero, "context_lens", "within [1"),
    (_length_over_capacity, "context_lens", "within [1"),
    (_page_out_of_range, "page_table", "-1 (unused) or a page"),
    (_needed_page_unmapped, "page_table", "must be mapped"),
    (_block_not_complete, "block_ids", "complete block ID"),
    (_hole_in_block_ids, "block_ids", "pad the end"),
    (_not_ascending, "block_ids", "strictly ascending"),
    (_no_visible_token, "block_ids/context_lens", "visible token"),
    (_nan_query, "Q", "finite"),
    (_inf_visible_value, "V_pages", "finite"),
]


test_valid_inputs_pass, test_each_rule_reports_one_problem = kit.rule_violation_tests(
    NAME, rules.check, _valid, VIOLATIONS)


def test_unread_stale_values_are_allowed() -> None:
    """Unselected tokens, slots past context_lens and spare pages may hold anything."""
    inputs = _valid()
    ids = set(inputs["block_ids"][0].tolist())
    unselected = next(j for j in range(50) if j not in ids)
    t = 4 * unselected
    page = int(inputs["page_table"][0, t // 64])
    inputs["K_pages"][page, t % 64] = float("nan")
    last = int(inputs["page_table"][0, 3])
    inputs["V_pages"][last, 202 - 192:] = float("nan")
    assert rules.check(NAME, inputs) == []

