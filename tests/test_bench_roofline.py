"""Roofline formulas: every definition has one, it evaluates on every sample workload, and
the arithmetic and the exact derived counts are right on hand-checked cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from hf_eval.bench import roofline
from hf_eval.data.errors import DataError
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import block_causal_attention, grouped_gemm, qsa_attention, sparse_mla

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return open_dataset(ROOT)


def test_every_definition_has_a_roofline_entry(dataset):
    entries = roofline.load()
    assert sorted(dataset.definitions) == sorted(set(dataset.definitions) & set(entries))
    assert set(entries) <= set(dataset.definitions), "roofline entry for an unknown definition"


def test_formulas_evaluate_on_every_sample_workload(dataset):
    """Exact counts read only the small inputs they need (never the gigabyte weights)."""
    entries = roofline.load()
    checked = 0
    for name, rows in dataset.workloads.items():
        definition = dataset.definition(name)
        for row in rows:
            axes = row.value.workload.axes
            exact = roofline.workload_cost(dataset, definition, row, entries)
            default = roofline.cost(definition, axes, None, entries)
            assert exact.flops >= 0 and exact.bytes > 0, (name, axes)
            # Defaults are the no-inputs upper bounds of the exact counts.
            assert exact.flops <= default.flops * (1 + 1e-9) + 1, (name, axes)
            assert exact.bytes <= default.bytes * (1 + 1e-9) + 1, (name, axes)
            checked += 1
    assert checked > 0


def test_gemm_formula_by_hand(dataset):
    definition = dataset.definition("dense_gemm_bf16_nt_n4096_k4096")
    cost = roofline.cost(definition, {"M": 8192})
    assert cost.flops == 2 * 8192 * 4096 * 4096
    assert cost.bytes == 2 * (8192 * 4096 + 4096 * 4096 + 8192 * 4096)
    ceilings = {"bf16_flops": 800e12, "fp8_flops": 1600e12, "bytes_per_s": 4e12}
    assert cost.time_s(ceilings) == pytest.approx(cost.flops / 800e12)
    assert roofline.fraction(cost.time_s(ceilings), 2 * cost.time_s(ceilings) * 1e3) == \
        pytest.approx(0.5)


def test_mixed_mla_counts_are_batch_totals(dataset):
    """valid8 / valid4 count indices over the whole batch: FLOPs are not multiplied by B again."""
    definition = dataset.definition("mixed_mla_decode_deepseek41_h64_d512_k8128_k4512")
    cost = roofline.cost(definition, {"B": 2, "P8": 8, "P4": 32})
    assert cost.flops == 2 * 64 * (128 + 512) * (2 * 576 + 2 * 512)
    half = roofline.cost(definition, {"B": 2, "P8": 8, "P4": 32},
                         counts={"valid8": 128, "valid4": 512})
    assert half.flops == cost.flops / 2


def test_memory_bound_entry_ignores_flops(dataset):
    definition = dataset.definition("gdn_decode_qk4_v8_d128_k_last")
    cost = roofline.cost(definition, {"batch_size": 64})
    assert cost.compute == "none"
    ceilings = {"bf16_flops": 1.0, "fp8_flops": 1.0, "bytes_per_s": 4e12}  # absurd FLOP rate
    assert cost.time_s(ceilings) == pytest.approx(cost.bytes / 4e12)
    # The FP32 state is read and written once: at least 2 * 4 bytes per state element.
    assert cost.bytes >= 2 * 4 * 64 * 8 * 128 * 128


def test_derived_counts_from_inputs():
    ids = torch.tensor([-1, -1, 0, 0, 0, -1, 1, 1], dtype=torch.int32)
    # causal 8*9/2 = 36 pairs, plus image 0 (3 tokens: 3 upper pairs) and image 1 (1 pair).
    assert block_causal_attention.visible_pairs({"image_ids": ids}) == 36 + 3 + 1
    expert_id = torch.tensor([0, 0, 5, 5, 5, 9], dtype=torch.int32)
    assert grouped_gemm.experts_used({"expert_id": expert_id}) == 3
    block_ids = torch.tensor([[0, 2, -1], [1, -1, -1]], dtype=torch.int32)
    context = torch.tensor([13, 6], dtype=torch.int32)  # 3 and 1 complete blocks
    # request 0: blocks 0 and 2 are complete (8 tokens) + 1 trailing token; request 1 has
    # one complete block (id 0), so its selected block 1 does not count: 2 trailing tokens.
    assert qsa_attention.tokens({"block_ids": block_ids, "context_lens": context}) == 11
    indices = torch.tensor([[3, -1, 4], [1, 2, 0]], dtype=torch.int32)
    lengths = torch.tensor([3, 2], dtype=torch.int32)
    assert sparse_mla.valid({"indices": indices, "topk_length": lengths}) == 4


def test_bad_formula_is_one_line_error(tmp_path):
    bad = {"flops": "__import__('os')", "bytes": "1", "compute": "bf16"}
    path = tmp_path / "toy" / "x.roofline.json"
    path.parent.mkdir()
    path.write_text(json.dumps(bad))
    with pytest.raises(DataError) as err:
        roofline.load(tmp_path)
    assert "x.roofline.json: flops" in str(err.value) and "\n" not in str(err.value)
    bad = {"flops": "1", "bytes": "1", "compute": "fp4"}
    path.write_text(json.dumps(bad))
    with pytest.raises(DataError, match="compute"):
        roofline.load(tmp_path)
