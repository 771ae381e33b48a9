"""Value rules of the QSA indexer: each rule violated once.
Every sample case passes them: tests/test_families.py."""

from __future__ import annotations

from collections.abc import Callable

import torch

from hf_eval.families import qsa_index
from hf_eval.families import qsa_index as rules
from tests import kit

NAME = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
CASES = kit.cases(NAME)


def _valid() -> dict:
    """Two requests (130 and 700 blocks) on shuffled pages, one spare column each."""
    return qsa_index.generate(kit.definition(NAME), {"num_complete_blocks": [130, 700]}, 5)


def _count_over_capacity(x: dict) -> None:
    width = x["page_table"].shape[1]
    x["page_table"][0] = torch.arange(width, dtype=torch.int32) % x["Kc_pages"].shape[0]
    x["num_complete_blocks"][0] = x["page_table"].shape[1] * 64 + 1


def _negative_count(x: dict) -> None:
    x["num_complete_blocks"][1] = -3


def _page_out_of_range(x: dict) -> None:
    x["page_table"][0, -1] = x["Kc_pages"].shape[0]   # an unused column, still checked


def _needed_page_unmapped(x: dict) -> None:
    x["page_table"][1, 5] = -1                         # block 320..383 of request 1


def _nan_query(x: dict) -> None:
    x["Q_idx"][1, 2, 7] = float("nan")


def _inf_key_read(x: dict) -> None:
    page = int(x["page_table"][0, 2])                  # blocks 128..191 of request 0
    x["Kc_pages"][page, 1, 0] = float("inf")           # block 129 < 130: read


VIOLATIONS: list[tuple[Callable[[dict], None], str, str]] = [
    (_count_over_capacity, "num_complete_blocks", "within [0"),
    (_negative_count, "num_complete_blocks", "within [0"),
    (_page_out_of_range, "page_table", "-1 (unused) or a page"),
    (_needed_page_unmapped, "page_table", "must be mapped"),
    (_nan_query, "Q_idx", "finite"),
    (_inf_key_read, "Kc_pages", "finite"),
]


test_valid_inputs_pass, test_each_rule_reports_one_problem = kit.rule_violation_tests(
    NAME, rules.check, _valid, VIOLATIONS)


def test_stale_values_that_are_not_read_are_allowed() -> None:
    """Slots past num_complete_blocks and spare pages may hold anything (even NaN)."""
    inputs = _valid()
    page = int(inputs["page_table"][0, 2])
    inputs["Kc_pages"][page, 2:, :] = float("nan")     # blocks 130.. of request 0: unread
    inputs["page_table"][0, -1] = 0                    # stale entry past the needed pages
    assert rules.check(NAME, inputs) == []


def test_rules_accept_tensors_on_their_own_dtypes() -> None:
    inputs = _valid()
    assert inputs["page_table"].dtype == torch.int32
    assert rules.check(NAME, inputs) == []
