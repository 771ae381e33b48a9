"""The sparse MLA prefill references (k128, k640), their torch solutions and the generator.

The reference is checked against an independent formulation written directly in FP64:
dense attention over all S rows in which every row is weighted by how many times it is
selected among the leading topk_length positions (zero weight = not a key), plus the sink
in the denominator.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch
from flashinfer_bench.data import Definition as FIDefinition
from flashinfer_bench.data import Solution as FISolution

from hf_eval.families import sparse_mla
from tests import kit

NAMES = {128: "sparse_mla_prefill_h64_d512_k128", 640: "sparse_mla_prefill_h64_d512_k640"}
INPUT_ORDER = ["Q", "KV", "indices", "topk_length", "attn_sink", "sm_scale"]


def solution_name(name: str) -> str:
    return kit.task(name).baseline.solution


@functools.cache
def solution(name: str):
    assert kit.solution(solution_name(name)).definition == name
    return kit.solution_run(solution_name(name))


cases = kit.cases
case_inputs = kit.case_inputs
case_reference = kit.case_reference
reference = kit.reference
definition = kit.definition_json
ALL_CASES = [(name, label) for name in NAMES.values() for label in kit.labels(name)]


def dense_truth(inputs: dict) -> np.ndarray:
    """FP64 dense attention over all S rows weighted by their selection multiplicity."""
    q = inputs["Q"].to(torch.float64).numpy()
    kv = inputs["KV"].to(torch.float64).numpy()
    sink = inputs["attn_sink"].to(torch.float64).numpy()
    out = np.zeros((q.shape[0], q.shape[1], 512))
    for t in range(q.shape[0]):
        leading = inputs["indices"][t, : int(inputs["topk_length"][t])].numpy()
        counts = np.bincount(leading[leading >= 0], minlength=kv.shape[0]).astype(np.float64)
        if counts.sum() == 0:
            continue
        logits = inputs["sm_scale"] * q[t] @ kv.T  # [H, S]: every row, selected or not
        top = np.maximum(np.where(counts > 0, logits, -np.inf).max(axis=1), sink)
        weights = counts * np.exp(logits - top[:, None])
        out[t] = weights @ kv[:, :512] / (weights.sum(axis=1) + np.exp(sink - top))[:, None]
    return out


# ------------------------------------------------------------------------------- files
@pytest.mark.parametrize("topk", sorted(NAMES))
def test_files_load_and_agree(topk: int) -> None:
    name = NAMES[topk]
    spec = definition(name)
    FIDefinition.model_validate(spec)
    FISolution.model_validate(kit.solution_json(solution_name(name)))
    assert list(spec["inputs"]) == INPUT_ORDER
    assert spec["axes"]["topk"]["value"] == topk
    task = kit.task_json(name)
    assert task["tolerance"]["atol"] == 0.005 and task["tolerance"]["rtol"] == 0.016
    assert task["tolerance"]["required_matched_ratio"] is None
    kit.assert_dev_held_out(name, task["dev"])
    # Named once audited on the H200: FlashMLA's sparse prefill, the engine's kernel, for
    # k128 (results/h200/2026-12-02-0232-library-engine-audits) and k640
    # (results/h200/2026-12-02-0421-gdn-mla-audits-ray).
    assert task["engine_baseline"] == f"sglang_flashmla_sparse_prefill_h64_k{topk}"
    assert task["preferred"]["cpu"]["solution"] == solution_name(name)
    assert len(cases(name)) >= 4


# -------------------------------------------------------------------------- reference
@pytest.mark.parametrize("name,label", ALL_CASES)
def test_reference_matches_dense_fp64_formulation(name: str, label: str) -> None:
    truth = torch.from_numpy(dense_truth(case_inputs(name, label)))
    out = case_reference(name, label)
    assert out.dtype == torch.bfloat16 and out.shape == truth.shape
    torch.testing.assert_close(out.double(), truth, rtol=2 ** -8, atol=1e-4)


def test_reference_ignores_positions_after_topk_length_and_zero_length_rows() -> None:
    name = NAMES[128]
    inputs = dict(case_inputs(name, "t6_zero_holes_stale"))
    out = case_reference(name, "t6_zero_holes_stale")
    assert int(inputs["topk_length"][1]) == 0 and bool((out[1] == 0).all())
    # Rewriting the ignored tail (to -1, or to other rows) leaves the output unchanged.
    lengths = inputs["topk_length"].long()
    tail = torch.arange(128)[None, :] >= lengths[:, None]
    for fill in (-1, 3):
        changed = dict(inputs, indices=torch.where(tail, fill, inputs["indices"]))
        assert torch.equal(reference(name)(*[changed[n] for n in INPUT_ORDER]), out)
    # Reading the tail would have changed the result: the stale rows are not inert.
    read_all = dict(inputs, topk_length=torch.full_like(inputs["topk_length"], 128))
    assert not torch.equal(reference(name)(*[read_all[n] for n in INPUT_ORDER]), out)


def test_reference_sink_semantics() -> None:
    name = NAMES[128]
    inputs = dict(case_inputs(name, "t1_full"))
    no_sink = dict(inputs, attn_sink=torch.full((64,), -math.inf))
    out = reference(name)(*[no_sink[n] for n in INPUT_ORDER])
    torch.testing.assert_close(out.double(), torch.from_numpy(dense_truth(no_sink)),
                               rtol=2 ** -8, atol=1e-4)
    heavy = dict(inputs, attn_sink=inputs["attn_sink"] + 40.0)
    assert float(reference(name)(*[heavy[n] for n in INPUT_ORDER]).abs().max()) < 1e-3


def test_softmax_of_samples_is_neither_uniform_nor_one_hot() -> None:
    for name in NAMES.values():
        inputs = case_inputs(name, "t1_full")
        keys = inputs["KV"][inputs["indices"][0].long()].double()
        logits = inputs["sm_scale"] * inputs["Q"][0].double() @ keys.T
        probs = torch.cat([logits, inputs["attn_sink"].double()[:, None]], 1).softmax(1)
        assert 0.01 < float(probs[:, :-1].max(dim=1).values.median()) < 0.6
        assert 0.001 < float(probs[:, -1].median()) < 0.9


# --------------------------------------------------------------------------- solution
@pytest.mark.parametrize("name,label", ALL_CASES)
def test_solution_matches_reference_under_task_tolerance(name: str, label: str) -> None:
    inputs = case_inputs(name, label)
    before = {n: v.clone() for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    out = solution(name)(*[inputs[n] for n in INPUT_ORDER])
    kit.assert_within_task_tolerance(name, out, case_reference(name, label))
    assert all(torch.equal(before[n], inputs[n]) for n in before)


def test_solution_never_dereferences_ignored_positions_and_chunks_queries() -> None:
    name = NAMES[128]
    inputs = dict(case_inputs(name, "t6_zero_holes_stale"))
    lengths = inputs["topk_length"].long()
    tail = torch.arange(128)[None, :] >= lengths[:, None]
    wild = dict(inputs, indices=torch.where(tail, 2 ** 30, inputs["indices"]),
                attn_sink=torch.full((64,), -math.inf))
    out = solution(name)(*[wild[n] for n in INPUT_ORDER])
    ref = reference(name)(*[wild[n] for n in INPUT_ORDER])
    assert bool((out[1] == 0).all()) and bool(torch.isfinite(out.float()).all())
    torch.testing.assert_close(out.float(), ref.float(), rtol=0.016, atol=0.005)
    # A tiny chunk budget forces one query per chunk: same result.
    module = vars(kit.fresh_solution_module(solution_name(name)))
    module["_CHUNK_BYTES"] = 1
    chunked = module["run"](*[inputs[n] for n in INPUT_ORDER])
    assert torch.equal(chunked, solution(name)(*[inputs[n] for n in INPUT_ORDER]))


# -------------------------------------------------------------------------- generator
@pytest.mark.parametrize("topk", sorted(NAMES))
def test_generator_is_deterministic_and_matches_the_definition(topk: int) -> None:
    name = NAMES[topk]
    spec = definition(name)
    const = {a: v["value"] for a, v in spec["axes"].items() if v["type"] == "const"}
    dtypes = {"bfloat16": torch.bfloat16, "int32": torch.int32, "float32": torch.float32}
    for case in cases(name):
        first = sparse_mla.generate(kit.definition(name), case["params"], case["seed"])
        second = sparse_mla.generate(kit.definition(name), case["params"], case["seed"])
        assert list(first) == INPUT_ORDER
        sizes = dict(const, T=case["params"]["T"], S=case["params"]["S"])
        kit.assert_inputs_as_specified(spec, first, second, sizes, dtypes)
        # Leading positions select rows visible to the query (causal), distinct unless
        # the case asks for duplicates.
        tokens, rows = case["params"]["T"], case["params"]["S"]
        for t in range(tokens):
            leading = first["indices"][t, : int(first["topk_length"][t])]
            valid = leading[leading != -1]
            assert bool(((valid >= 0) & (valid < rows - tokens + t + 1)).all())
            if not case["params"].get("duplicates"):
                assert valid.unique().numel() == valid.numel()
