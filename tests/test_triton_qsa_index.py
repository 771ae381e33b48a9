"""The Triton QSA indexer solutions on every sample case, run by Triton's CPU interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the paged
gather, the FP32 scoring, the packed (score, lower-ID) sort keys of the first solution,
the bisection select of the second and the byte-by-byte radix select of the third
(threshold, ties at the threshold, prefix-sum slots, the wide-row fallback) are checked
against the reference on the committed sample cases and on tie-heavy variants of them
(exact integer match, the task's rule); the radix select also on crafted bit patterns
that differ only in one byte of the 512th score.
Speed is measured only on the H200. Skipped when triton is not installed.
"""

from tests.triton_kit import (  # noqa: I001
    check_case, forced_sizes_test, inputs, interpreter_only, load, sample_params)

import pytest
import torch

pytestmark = interpreter_only

DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
NAMES = ["triton_paged_score_topk_qsa_index_h4", "triton_score_bisect_select_qsa_index_h4",
         "triton_pipelined_score_radix_select_qsa_index_h4"]
#: The solutions that select in one Triton program per row (with the wide-row fallback).
SELECTING = NAMES[1:]

#: The radix solution's scoring tiles a program (1 at the sample cases' batches; up to 4
#: on the GPU, 8 in a variant), each forced on every sample case.
test_every_tile_count = forced_sizes_test({DEFINITION: NAMES[2]}, {DEFINITION: (1, 2, 4, 8)},
                                          chooser="_tiles_per_program")
CASES, CASE_IDS = sample_params({DEFINITION: NAMES[0]})


@pytest.mark.parametrize("solution", NAMES)
@pytest.mark.parametrize(("name", "case"), CASES, ids=CASE_IDS)
def test_sample_case_exact(solution, name, case):
    check_case(*load(name, solution), case)


@pytest.mark.parametrize("solution", NAMES)
def test_tie_rule_is_enforced(solution):
    """All-zero keys tie everywhere: only the 512 lowest IDs pass (the check can fail)."""
    definition, reference, entry, _ = load(DEFINITION, solution)
    case = next(c for n, c in CASES if c["label"] == "b1_all_tied_zero_keys")
    args = inputs(definition, case)
    got = entry.run(*args)
    assert torch.equal(got, reference(*args))
    assert not torch.equal(got.flip(1), reference(*args))


@pytest.mark.parametrize("solution", SELECTING)
@pytest.mark.parametrize("wide_fallback", [False, True])
def test_select_with_many_ties_at_the_threshold(solution, wide_fallback, monkeypatch):
    """Keys rounded to a few values: hundreds of blocks tie at the 512th score, so the
    lower-ID rule decides most of the tail; also through the torch.topk fallback."""
    definition, reference, entry, _ = load(DEFINITION, solution)
    if wide_fallback:
        monkeypatch.setattr(entry.module, "MAX_REGISTER_WIDTH", 16)
    for _, case in CASES:
        args = inputs(definition, case)
        keys = args[1]
        args[1] = (keys.float() * 2).round().clamp(-1, 1).to(keys.dtype)
        expected = reference(*args)
        assert torch.equal(entry.run(*args), expected), case["label"]


def _top512(bits: torch.Tensor) -> torch.Tensor:
    """The contract's selection on score bit patterns, by plain sorting: the 512 largest
    valid patterns (>= 0), lower ID first among equals, ascending, -1 padded."""
    out = torch.full((bits.shape[0], 512), -1, dtype=torch.int32)
    for b, row in enumerate(bits.tolist()):
        order = sorted((i for i, v in enumerate(row) if v >= 0), key=lambda i: (-row[i], i))
        chosen = sorted(order[:512])
        out[b, :len(chosen)] = torch.tensor(chosen, dtype=torch.int32)
    return out


def _crafted_rows(width: int) -> torch.Tensor:
    """Rows whose 512th pattern is decided in each of the four bytes in turn, with ties,
    invalid (-1) blocks, and rows of 511, 512 and 513 valid blocks."""
    g = torch.Generator().manual_seed(7)
    base = 0x3F000000
    rows = []
    for byte in range(4):  # patterns that share every byte above `byte`
        low = torch.randint(0, 256, (width,), generator=g, dtype=torch.int64) << (8 * byte)
        rows.append(base + (low if byte < 3 else (low & 0x3F000000)))
    ties = torch.full((width,), base + 5, dtype=torch.int64)
    ties[torch.randperm(width, generator=g)[:300]] = base + 9
    ties[torch.randperm(width, generator=g)[:200]] = -1
    rows.append(ties)
    for n in (511, 512, 513):
        row = torch.full((width,), -1, dtype=torch.int64)
        row[torch.randperm(width, generator=g)[:n]] = torch.randint(
            0, 2**31 - 1, (n,), generator=g, dtype=torch.int64)
        rows.append(row)
    return torch.stack(rows).to(torch.int32)


@pytest.mark.parametrize("width", [1100, 8192])
def test_radix_select_on_crafted_bit_patterns(width):
    """The radix select kernel alone against sorting, on patterns built so that the 512th
    largest is decided by the top, second, third and last byte in turn."""
    _, _, entry, _ = load(DEFINITION, NAMES[2])
    bits = _crafted_rows(width)
    out = torch.empty((bits.shape[0], 512), dtype=torch.int32)
    entry.module._select_kernel[(bits.shape[0],)](
        bits, out, width, WP=1 << (width - 1).bit_length(), TOPK=512)
    assert torch.equal(out, _top512(bits))
