"""Capture: hooks that never change a program's results, matching, proposals, limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.attention.flex_attention as flex_module
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from hf_eval.capture import Adapted, Call, Capture, Limits, OpSpec, Sampling
from hf_eval.capture.replay import replay
from hf_eval.checker import run_check
from hf_eval.cli import main
from hf_eval.data.errors import DataError
from hf_eval.dataset import open_dataset
from tests.conftest import write_json

HEADS, DIM = 2, 8


class Block(nn.Module):
    """A tiny attention block: fused QKV projection, SDPA, output projection."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(HEADS * DIM, 3 * HEADS * DIM)
        self.out = nn.Linear(HEADS * DIM, HEADS * DIM, bias=False)

    def forward(self, x, key_valid=None, causal=False, scale=None, dropout=0.0):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, DIM).permute(2, 0, 3, 1, 4)
        mask = None if key_valid is None else key_valid[:, None, None, :]
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                           scale=scale, dropout_p=dropout)
        return self.out(o.transpose(1, 2).reshape(b, s, HEADS * DIM))


@pytest.fixture
def block() -> Block:
    torch.manual_seed(0)
    return Block().eval()


def inputs(batch: int = 2, seq: int = 5, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, seq, HEADS * DIM, generator=gen)
    key_valid = torch.ones(batch, seq, dtype=torch.bool)
    key_valid[0, seq - 2:] = False  # the first sequence is padded
    return x, key_valid


def receipts(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "captures.jsonl").read_text().splitlines()]


def test_capture_keeps_results_and_writes_a_dataset_that_passes_check(tmp_path, block):
    x, key_valid = inputs()
    with torch.no_grad():
        expected = block(x, key_valid)
        with Capture(tmp_path, program="toy-block", model="toy", revision="r1", propose=True,
                     modules=block) as cap:
            got = block(x, key_valid)
            again = block(inputs(seed=2)[0], key_valid)  # same weights, new activations
    assert torch.equal(got, expected) and again.shape == expected.shape
    report = cap.report
    assert report.calls == {"linear": 4, "sdpa": 2} and not report.errors
    assert {n for n, p in report.proposals.items() if p["written"]} == {
        "linear_n48_k16_bias_fp32", "linear_n16_k16_fp32", "attention_key_padding_h2_d8_fp32"}
    assert run_check(tmp_path) == ([], [])
    rows = receipts(tmp_path)
    assert len(rows) == 6
    qkv = next(r for r in rows if r["provenance"]["call_site"].get("module") == "qkv")
    assert qkv["provenance"]["kind"] == "captured" and qkv["provenance"]["model"] == "toy"
    assert qkv["provenance"]["call_site"]["file"].endswith("tests/test_capture.py")
    assert qkv["adaptations"] == ["x, y: reshape [2, 5, 16] -> [10, 16] (leading dimensions "
                                  "flattened into M)"]
    attention = next(r for r in rows if r["provenance"]["op"] == "sdpa")
    assert attention["provenance"]["constants"] == {"scale": 1 / DIM ** 0.5, "mask": "key_padding"}
    assert any("transpose(1, 2)" in a for a in attention["adaptations"])
    assert any("key_valid [B, Nk]" in a for a in attention["adaptations"])
    # The stored key mask is the engine's, reduced to [B, Nk].
    ds = open_dataset(tmp_path)
    row = ds.workloads["attention_key_padding_h2_d8_fp32"][0]
    assert torch.equal(ds.store.load(row.value.workload.inputs["key_valid"]), key_valid)
    # The qkv weight was seen twice but stored (and hashed) once.
    weights = [p for p in (tmp_path / "blob/workloads/linear_n48_k16_bias_fp32").iterdir()
               if "weight" in safe_open(p, "pt").keys()]
    assert len(weights) == 1
    assert replay(tmp_path).failures == []


def test_a_definition_matches_only_calls_with_its_constants(tmp_path, block):
    x, _ = inputs()
    with torch.no_grad(), Capture(tmp_path, program="p", ops=["sdpa"], propose=True):
        block(x)
    names = sorted(p.stem for p in (tmp_path / "definitions").rglob("*.json"))
    assert names == ["attention_none_h2_d8_fp32"]
    with torch.no_grad(), Capture(tmp_path, program="p2", ops=["sdpa"]) as cap:
        block(x)  # matches
        block(x, causal=True)  # causal: refused by the declared mask constant
        block(x, scale=0.5)  # another scale: refused by the declared scale constant
    report = cap.report
    assert report.definitions["attention_none_h2_d8_fp32"].captured == 1
    reasons = [next(iter(u["closest"].values())) for u in report.unmatched.values()]
    assert len(reasons) == 2
    assert any(r.startswith("constant mask:") for r in reasons)
    assert any(r.startswith("constant scale:") and "0.5" in r for r in reasons)
    assert run_check(tmp_path) == ([], [])


def test_limits_and_sampling_bound_what_is_written(tmp_path, block):
    x, _ = inputs()
    with torch.no_grad(), Capture(tmp_path / "a", program="p", ops=["linear"], propose=True,
                                  limits=Limits(calls_per_definition=2)) as cap:
        for _ in range(4):
            block(x)
    stats = cap.report.definitions["linear_n48_k16_bias_fp32"]
    assert (stats.captured, stats.skipped_call_limit) == (2, 2)

    with torch.no_grad(), Capture(tmp_path / "b", program="p", ops=["linear"], propose=True,
                                  limits=Limits(bytes_per_definition=1000)) as cap:
        block(x)
    assert cap.report.definitions["linear_n48_k16_bias_fp32"].skipped_byte_limit == 1
    assert not any(p["written"] for p in cap.report.proposals.values())

    with torch.no_grad(), Capture(tmp_path / "c", program="p", ops=["linear"], propose=True,
                                  sampling=Sampling(every=2, start=1)) as cap:
        for _ in range(3):
            block(x)  # linear calls 0..5: qkv, out, qkv, out, qkv, out
    assert cap.report.calls["linear"] == 6 and cap.report.sampled["linear"] == 3
    sampled = sorted(r["provenance"]["call_index"] for r in receipts(tmp_path / "c"))
    assert sampled == [1, 3, 5]
    assert {r["provenance"]["call_site"]["function"] for r in receipts(tmp_path / "c")} == {
        "forward"}


def test_calls_that_cannot_be_adapted_are_counted_with_reasons(tmp_path, block):
    x, _ = inputs()
    q = torch.randn(1, HEADS, 4, DIM)
    head_mask = torch.rand(1, HEADS, 4, 4) > 0.3
    head_mask[..., 0] = True
    with torch.no_grad(), Capture(tmp_path, program="p", ops=["sdpa"], propose=True) as cap:
        block(x, dropout=0.5)
        F.scaled_dot_product_attention(q, q, q, attn_mask=head_mask)
        F.scaled_dot_product_attention(q, q, q, attn_mask=torch.randn(1, 1, 4, 4))
    reasons = dict(cap.report.not_adaptable["sdpa"])
    assert reasons == {"dropout_p > 0 (random: the output cannot be reproduced)": 1,
                       "head-dependent attention mask": 1,
                       "additive attention bias (values other than 0 and -inf)": 1}
    assert cap.report.captured == 0


def test_a_failing_recorder_never_changes_what_the_program_sees(tmp_path, block):
    def broken(call: Call) -> Adapted:
        raise RuntimeError("adapter bug")

    spec = OpSpec("broken_linear", broken, torch_function=F.linear,
                  parameters=("input", "weight", "bias"))
    x, _ = inputs()
    with torch.no_grad():
        expected = block(x)
        with Capture(tmp_path, program="p", ops=[], extra_ops=[spec]) as cap:
            got = block(x)
    assert torch.equal(got, expected)
    assert cap.report.errors == ["broken_linear call 0: RuntimeError: adapter bug",
                                 "broken_linear call 1: RuntimeError: adapter bug"]


def test_hooks_are_removed_on_exit_and_program_errors_propagate(tmp_path, block):
    original = flex_module.flex_attention
    with pytest.raises(ValueError, match="program failed"):
        with Capture(tmp_path, program="p"):
            assert flex_module.flex_attention is not original
            raise ValueError("program failed")
    assert flex_module.flex_attention is original and flex_attention is original
    with Capture(tmp_path, program="p") as cap:
        pass
    block(inputs()[0])  # after the capture: not seen
    assert sum(cap.report.calls.values()) == 0


CACHE_REFERENCE = '''import torch


def run(cache, x):
    """The cache after appending x at the first free (all-zero) row, summed over rows."""
    free = int((cache.abs().sum(dim=1) != 0).sum())
    updated = cache.clone()
    updated[free] = x
    return updated.sum(dim=0)
'''


def append_and_sum(cache: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """An engine function that modifies its input: writes x into the cache in place."""
    free = int((cache.abs().sum(dim=1) != 0).sum())
    cache[free] = x
    return cache.sum(dim=0)


def cache_adapter(call: Call) -> Adapted:
    a = call.arguments
    return Adapted(family="cache_sum", inputs={"cache": a["cache"], "x": a["x"]},
                   outputs={"total": call.result}, constants={}, adaptations=[])


def test_user_function_with_input_snapshot_and_hand_written_definition(tmp_path):
    write_json(tmp_path / "definitions/cache/cache_append_sum_r4_d3.json", {
        "name": "cache_append_sum_r4_d3", "op_type": "cache",
        "tags": ["capture:op=cache_sum"],
        "axes": {"R": {"type": "const", "value": 4}, "D": {"type": "const", "value": 3}},
        "inputs": {"cache": {"shape": ["R", "D"], "dtype": "float32"},
                   "x": {"shape": ["D"], "dtype": "float32"}},
        "outputs": {"total": {"shape": ["D"], "dtype": "float32"}},
        "reference": CACHE_REFERENCE})
    write_json(tmp_path / "tasks/cache_append_sum_r4_d3.json", {
        "definition": "cache_append_sum_r4_d3",
        "workloads": ["workloads/cache/cache_append_sum_r4_d3.jsonl"],
        "tolerance": {"atol": 1e-6, "rtol": 1e-6}, "baseline": {"solution": "ref_cache"}})
    write_json(tmp_path / "solutions/cache/ref_cache.json", {
        "name": "ref_cache", "definition": "cache_append_sum_r4_d3", "author": "tests",
        "spec": {"language": "python", "target_hardware": ["cpu"], "entry_point": "main.py::run",
                 "dependencies": ["torch>=2.9"], "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": CACHE_REFERENCE}]})
    spec = OpSpec("cache_sum", cache_adapter, attribute=f"{__name__}:append_and_sum",
                  snapshot_inputs=True)
    cache = torch.zeros(4, 3)
    with Capture(tmp_path, program="p", ops=[], extra_ops=[spec]) as cap:
        for step in range(3):
            append_and_sum(cache, torch.full((3,), float(step + 1)))
    assert cap.report.definitions["cache_append_sum_r4_d3"].captured == 3
    assert torch.equal(cache[:3, 0], torch.tensor([1.0, 2.0, 3.0]))  # the program's effect
    ds = open_dataset(tmp_path)
    stored = [ds.store.load(r.value.workload.inputs["cache"])
              for r in ds.workloads["cache_append_sum_r4_d3"]]
    # Snapshots taken before each call: 0, 1 and 2 rows filled, not the final cache.
    assert [int((c.abs().sum(dim=1) != 0).sum()) for c in stored] == [0, 1, 2]
    assert run_check(tmp_path) == ([], [])
    result = replay(tmp_path)
    assert [r["status"] for r in result.results] == ["PASSED"] * 3


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_flex_attention_imported_by_name_is_captured(tmp_path):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, HEADS, 8, DIM) for _ in range(3))
    causal = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 8, 8, device="cpu")
    expected = flex_attention(q, k, v, block_mask=causal)
    with Capture(tmp_path, program="p", ops=["flex_attention"], propose=True) as cap:
        got = flex_attention(q, k, v, block_mask=causal)  # this module's own imported name
    assert torch.equal(got, expected)
    assert [n for n, p in cap.report.proposals.items() if p["written"]] == [
        "attention_causal_h2_d8_fp32"]
    adaptations = receipts(tmp_path)[0]["adaptations"]
    assert any("causal (top-left) mask" in a for a in adaptations)
    assert replay(tmp_path).failures == []


def test_malformed_capture_tag_is_a_one_line_error(tmp_path):
    from tests.conftest import TOY_DEFINITION

    write_json(tmp_path / "definitions/toy/toy_linear_n8_k16.json",
               {**TOY_DEFINITION, "tags": ["capture:op=linear", "capture:scale"]})
    with pytest.raises(DataError) as err:
        with Capture(tmp_path, program="p"):
            pass
    assert str(err.value) == ("definitions/toy/toy_linear_n8_k16.json: tags: tag "
                              "'capture:scale' must read 'capture:<name>=<value>'")


def test_rerun_is_idempotent_and_cli_runs_a_script(tmp_path):
    script = tmp_path / "program.py"
    script.write_text("import sys\nimport torch\n"
                      "torch.manual_seed(0)\n"
                      "layer = torch.nn.Linear(16, 4)\n"
                      "x = torch.randn(int(sys.argv[1]), 16)\n"
                      "with torch.no_grad():\n    layer(x)\n")
    root = tmp_path / "ds"
    for _ in range(2):
        assert main(["--root", str(root), "capture", "--propose", "--ops", "linear",
                     "--program", "program.py", str(script), "3"]) == 0
    rows = (root / "workloads/linear/linear_n4_k16_bias_fp32.jsonl").read_text().splitlines()
    assert len(rows) == 1 and len(receipts(root)) == 1
    assert json.loads(rows[0])["workload"]["axes"] == {"M": 3}
    assert run_check(root) == ([], [])
