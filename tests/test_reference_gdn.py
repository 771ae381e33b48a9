"""The gdn references, solutions, sample generator, cases and tasks.

The references are the truth, so they are checked against formulations that share no code
with them: the closed form of one state update, S^T <- g S^T (I - beta k k^T) + beta v k^T
in the k-last layout, evaluated in FP64 with explicit matrices, applied token by token
per head; and the structural identities decode == one-token prefill, prefill of two
concatenated sequences == two separate prefills, and "an empty sequence leaves its state
unchanged". The solutions and the sample data are then checked against the references
under the task's own tolerance, and the sample data is shown to reject plausible bugs.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from flashinfer_bench.data import Definition, Solution

from hf_eval.families import gdn as gen
from hf_eval.families.common import normal, rng
from tests import kit

DECODE = "gdn_decode_qk4_v8_d128_k_last"
PREFILL = "gdn_prefill_qk4_v8_d128_k_last"
SOLUTION = {DECODE: "torch_gdn_decode_qk4_v8_d128",
            PREFILL: "torch_gdn_prefill_chunked_qk4_v8_d128"}
DEFAULT_SCALE = 128 ** -0.5


definition = kit.definition_json
reference = kit.reference
cases = kit.cases
task = kit.task_json


def solution_json(name: str) -> dict[str, Any]:
    return kit.solution_json(SOLUTION[name])


def solution_module(name: str) -> dict[str, Any]:
    """A fresh copy of the solution's module: tests change its globals."""
    return vars(kit.fresh_solution_module(SOLUTION[name]))


def args_of(inputs: dict[str, Any]) -> list[Any]:
    return list(inputs.values())


def within_task_tolerance(out: torch.Tensor, ref: torch.Tensor, name: str) -> bool:
    """The task's absolute_or_relative rule on every element, written out independently."""
    tol = task(name)["tolerance"]
    assert tol["comparison"] == "absolute_or_relative"
    assert out.shape == ref.shape and out.dtype == ref.dtype
    err = (out.double() - ref.double()).abs()
    ok = (err <= tol["atol"]) | (err / (ref.double().abs() + 1e-8) <= tol["rtol"])
    return bool(ok.all()) and bool(torch.isfinite(out).all())


@functools.cache
def sample(name: str, label: str) -> tuple[dict[str, Any], tuple[torch.Tensor, torch.Tensor]]:
    """A generated sample case and its reference outputs (computed once per test run)."""
    inputs = kit.fresh_case_inputs(name, label)
    return inputs, reference(name)(*args_of(inputs))


labels = kit.labels


# ---------------------------------------------------------------- small test inputs


def small_prefill(seq_lens: list[int], seed: int, state_std: float = 1.0) -> dict[str, Any]:
    """Test inputs (not the generator's): unit q, k; N(0,1) v, a, b; Gaussian state."""
    tokens, num_seqs = sum(seq_lens), len(seq_lens)
    draw = rng("test_gdn", seed)
    qk = draw.standard_normal((2, tokens, 4, 128))
    qk /= np.linalg.norm(qk, axis=-1, keepdims=True)
    q, k = (torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16) for x in qk)
    state = torch.from_numpy(
        (draw.standard_normal((num_seqs, 8, 128, 128)) * state_std).astype(np.float32))
    return {
        "q": q, "k": k, "v": normal(draw, (tokens, 8, 128)), "state": state,
        "A_log": torch.from_numpy(np.log(draw.uniform(1, 16, 8)).astype(np.float32)),
        "a": normal(draw, (tokens, 8)),
        "dt_bias": torch.from_numpy(draw.uniform(-5, -1, 8).astype(np.float32)),
        "b": normal(draw, (tokens, 8)),
        "cu_seqlens": torch.tensor([0] + np.cumsum(seq_lens).tolist(), dtype=torch.int64),
        "scale": DEFAULT_SCALE,
    }


def as_decode(inputs: dict[str, Any]) -> dict[str, Any]:
    """The decode-definition view of a prefill input whose sequences have one token each."""
    lens = inputs["cu_seqlens"].diff()
    assert bool((lens == 1).all())
    out = {n: inputs[n] for n in ("q", "k", "v", "state", "A_log", "a", "dt_bias", "b")}
    for n in ("q", "k", "v", "a", "b"):
        out[n] = inputs[n].unsqueeze(1)
    out["scale"] = inputs["scale"]
    return out


def fp64_closed_form(inputs: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """Prefill in FP64 with explicit per-head matrices, token by token (no einsum/batching).

    Per token: S^T <- g S^T (I - beta k k^T) + beta v k^T (k-last), out = scale S^T q.
    """
    scale = inputs["scale"] or DEFAULT_SCALE
    q, k, v = (inputs[n].double() for n in ("q", "k", "v"))
    a, b = inputs["a"].double(), inputs["b"].double()
    a_log, dt_bias = inputs["A_log"].double(), inputs["dt_bias"].double()
    bounds = inputs["cu_seqlens"].tolist()
    eye = torch.eye(128, dtype=torch.float64)
    out = torch.zeros(q.shape[0], 8, 128, dtype=torch.float64)
    new_state = inputs["state"].double().clone()
    for n in range(len(bounds) - 1):
        for h in range(8):
            s_t = new_state[n, h]  # [V, K] = S^T
            for t in range(bounds[n], bounds[n + 1]):
                kt, qt, vt = k[t, h // 2], q[t, h // 2], v[t, h]
                g = math.exp(-math.exp(a_log[h]) * math.log1p(math.exp(a[t, h] + dt_bias[h])))
                beta = 1.0 / (1.0 + math.exp(-b[t, h]))
                s_t = g * s_t @ (eye - beta * torch.outer(kt, kt)) + beta * torch.outer(vt, kt)
                out[t, h] = scale * s_t @ qt
            new_state[n, h] = s_t
    return out, new_state


def assert_bf16_of(out: torch.Tensor, exact: torch.Tensor) -> None:
    """``out`` is BF16 and within one BF16 rounding (plus FP32 noise) of ``exact``."""
    assert out.dtype == torch.bfloat16 and out.shape == exact.shape
    err = (out.double() - exact).abs()
    assert bool((err <= 2.0 ** -8 * exact.abs() + 1e-5).all()), float(err.max())


# ---------------------------------------------------------------- files


@pytest.mark.parametrize("name", [DECODE, PREFILL])
def test_definition_and_solution_load_in_flashinfer_bench(name: str) -> None:
    d = Definition.model_validate(definition(name))
    assert d.op_type == "gdn"
    order = ["q", "k", "v", "state", "A_log", "a", "dt_bias", "b"]
    assert list(d.inputs) == order + (["cu_seqlens"] if name == PREFILL else []) + ["scale"]
    assert list(d.outputs) == ["output", "new_state"]
    s = Solution.model_validate(solution_json(name))
    assert s.definition == name and s.spec.destination_passing_style is False


# The engine's own paths (docs/interface-audit). GDN prefill's passed 7 of 12 samples on the
# H200 (results/h200/2026-12-02-0421-gdn-mla-audits-ray): it is the engine's baseline,
# failures and all.
ENGINE_BASELINE = {DECODE: "sglang_packed_decode_gdn_decode_qk4_v8_d128",
                   PREFILL: "sglang_flashinfer_gdn_prefill_qk4_v8_d128"}


@pytest.mark.parametrize("name", [DECODE, PREFILL])
def test_task_config(name: str) -> None:
    t = task(name)
    assert t["definition"] == name
    assert t["tolerance"] == {"atol": 0.01, "rtol": 0.01, "required_matched_ratio": None,
                              "comparison": "absolute_or_relative"}
    kit.assert_dev_held_out(name, t["dev"])
    assert t["baseline"] == {"solution": SOLUTION[name], "timed": "call"}
    # The engine's own path, named once the H200 audited it
    # (results/h200/2026-12-02-0232-library-engine-audits): SGLang's packed Triton decode; the
    # prefill's FlashInfer path was not reached there.
    assert t["engine_baseline"] == ENGINE_BASELINE[name]
    assert t["preferred"]["cpu"]["solution"] == SOLUTION[name]
    assert t["workloads"] == [f"workloads/gdn/{name}.jsonl"]


# ---------------------------------------------------------------- reference truth


def test_decode_reference_matches_fp64_closed_form() -> None:
    inputs = small_prefill([1, 1, 1], seed=1, state_std=0.8)
    exact_out, exact_state = fp64_closed_form(inputs)
    out, new_state = reference(DECODE)(*args_of(as_decode(inputs)))
    assert new_state.dtype == torch.float32 and new_state.shape == (3, 8, 128, 128)
    torch.testing.assert_close(new_state.double(), exact_state, rtol=1e-5, atol=1e-5)
    assert out.shape == (3, 1, 8, 128)
    assert_bf16_of(out[:, 0], exact_out)


def test_prefill_reference_matches_fp64_closed_form() -> None:
    inputs = small_prefill([5, 0, 3], seed=2)
    exact_out, exact_state = fp64_closed_form(inputs)
    out, new_state = reference(PREFILL)(*args_of(inputs))
    torch.testing.assert_close(new_state.double(), exact_state, rtol=1e-5, atol=1e-5)
    assert_bf16_of(out, exact_out)


@pytest.mark.parametrize("kind", ["reference", "solution"])
def test_decode_equals_one_token_prefill(kind: str) -> None:
    inputs = small_prefill([1, 1, 1, 1], seed=3)
    if kind == "reference":
        dec, pre = reference(DECODE), reference(PREFILL)
    else:
        dec, pre = solution_module(DECODE)["run"], solution_module(PREFILL)["run"]
    d_out, d_state = dec(*args_of(as_decode(inputs)))
    p_out, p_state = pre(*args_of(inputs))
    torch.testing.assert_close(d_state, p_state, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(d_out[:, 0].float(), p_out.float(), rtol=2.0 ** -7, atol=1e-6)


@pytest.mark.parametrize("kind", ["reference", "solution"])
def test_concatenated_sequences_equal_separate_prefills(kind: str) -> None:
    run = reference(PREFILL) if kind == "reference" else solution_module(PREFILL)["run"]
    both = small_prefill([37, 70], seed=4)
    out, state = run(*args_of(both))
    for n, (start, end) in enumerate([(0, 37), (37, 107)]):
        one = dict(both)
        for name in ("q", "k", "v", "a", "b"):
            one[name] = both[name][start:end]
        one["state"] = both["state"][n:n + 1]
        one["cu_seqlens"] = torch.tensor([0, end - start])
        o, s = run(*args_of(one))
        torch.testing.assert_close(s[0], state[n], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(o.float(), out[start:end].float(), rtol=2.0 ** -7,
                                   atol=1e-5)


@pytest.mark.parametrize("kind", ["reference", "solution"])
def test_empty_sequence_leaves_state_unchanged(kind: str) -> None:
    run = reference(PREFILL) if kind == "reference" else solution_module(PREFILL)["run"]
    inputs = small_prefill([0, 9, 0, 4, 0], seed=5)
    out, new_state = run(*args_of(inputs))
    for n in (0, 2, 4):
        assert torch.equal(new_state[n], inputs["state"][n])
    assert not torch.equal(new_state[1], inputs["state"][1])
    # Nothing but empty sequences: no tokens at all.
    empty = small_prefill([0, 0], seed=6)
    out, new_state = run(*args_of(empty))
    assert out.shape == (0, 8, 128) and out.dtype == torch.bfloat16
    assert torch.equal(new_state, empty["state"])
    assert new_state.untyped_storage().data_ptr() != empty["state"].untyped_storage().data_ptr()


@pytest.mark.parametrize("name", [DECODE, PREFILL])
@pytest.mark.parametrize("kind", ["reference", "solution"])
def test_scale_zero_means_default(name: str, kind: str) -> None:
    run = reference(name) if kind == "reference" else solution_module(name)["run"]
    inputs = small_prefill([1, 1] if name == DECODE else [6, 2], seed=7)
    if name == DECODE:
        inputs = as_decode(inputs)
    explicit = run(*args_of(inputs))
    zero = run(*args_of({**inputs, "scale": 0.0}))
    assert torch.equal(explicit[0], zero[0]) and torch.equal(explicit[1], zero[1])
    doubled = run(*args_of({**inputs, "scale": 2 * DEFAULT_SCALE}))
    torch.testing.assert_close(doubled[0].float(), 2 * explicit[0].float())


# ---------------------------------------------------------------- solutions on samples


@pytest.mark.parametrize("name,label",
                         [(n, lab) for n in (DECODE, PREFILL) for lab in labels(n)])
def test_solution_matches_reference_on_samples(name: str, label: str) -> None:
    inputs, (ref_out, ref_state) = sample(name, label)
    snapshot = {n: v.clone() for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    out, new_state = solution_module(name)["run"](*args_of(inputs))
    assert within_task_tolerance(out, ref_out, name)
    assert within_task_tolerance(new_state, ref_state, name)
    for n, before in snapshot.items():  # neither the reference nor the solution mutates
        assert torch.equal(inputs[n], before), n
    assert new_state.untyped_storage().data_ptr() != inputs["state"].untyped_storage().data_ptr()


@pytest.mark.parametrize("chunk", [16, 64])
def test_prefill_solution_chunk_sizes_and_prepare(chunk: int) -> None:
    """The CUDA chunk size (64) and a small one agree with the reference too, via prepare."""
    module = solution_module(PREFILL)
    module["CHUNK_CPU"] = chunk
    inputs, (ref_out, ref_state) = sample(PREFILL, "three_seqs_97_1_64")
    out, new_state = module["prepare"](*args_of(inputs))()
    assert within_task_tolerance(out, ref_out, PREFILL)
    assert within_task_tolerance(new_state, ref_state, PREFILL)


# ---------------------------------------------------------------- generator


def raw_bytes(t: torch.Tensor) -> bytes:
    """The tensor's bytes (bf16 viewed as int16, which NumPy can hold)."""
    return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()


def resolved_shape(spec: dict[str, Any], axes: dict[str, Any], var: dict[str, int]) -> tuple:
    return tuple(axes[a]["value"] if axes[a]["type"] == "const" else var[a]
                 for a in spec["shape"])


@pytest.mark.parametrize("name", [DECODE, PREFILL])
def test_generator_is_deterministic_and_matches_definition(name: str) -> None:
    d = definition(name)
    dtypes = {"bfloat16": torch.bfloat16, "float32": torch.float32, "int64": torch.int64}
    for case in cases(name):
        first = gen.generate(kit.definition(name), case["params"], case["seed"])
        second = gen.generate(kit.definition(name), case["params"], case["seed"])
        assert list(first) == list(d["inputs"])
        if name == DECODE:
            var = {"batch_size": case["params"]["batch_size"]}
        else:
            lens = case["params"]["seq_lens"]
            var = {"total_seq_len": sum(lens), "num_seqs": len(lens),
                   "len_cu_seqlens": len(lens) + 1}
        for n, spec in d["inputs"].items():
            a, b = first[n], second[n]
            if spec["shape"] is None:
                assert isinstance(a, float) and a == b == case["params"]["scale"]
                continue
            assert a.dtype == dtypes[spec["dtype"]], n
            assert tuple(a.shape) == resolved_shape(spec, d["axes"], var), n
            assert raw_bytes(a) == raw_bytes(b), n
    # Layer weights do not depend on the case seed; activations do.
    c0, c1 = cases(name)[0], cases(name)[1]
    g0, g1 = (gen.generate(kit.definition(name), c["params"], c["seed"]) for c in (c0, c1))
    assert torch.equal(g0["A_log"], g1["A_log"]) and torch.equal(g0["dt_bias"], g1["dt_bias"])
    assert not torch.equal(g0["v"][:1], g1["v"][:1])


def test_generated_values_are_model_like() -> None:
    inputs, _ = sample(PREFILL, "one_seq_t200")
    norms = inputs["k"].float().norm(dim=-1)
    assert bool(((norms - 1).abs() < 0.01).all())  # unit keys, up to bf16 rounding
    g = torch.exp(-inputs["A_log"].exp() * F.softplus(inputs["a"].float() + inputs["dt_bias"]))
    assert 0.8 < float(g.median()) < 0.995 and float(g.min()) < 0.3  # long and short memory
    assert 0.25 < float(inputs["state"].std()) < 1.5
    large, _ = sample(PREFILL, "large_state_20_57")
    assert float(large["state"].abs().mean()) > 10


# ---------------------------------------------------------------- discriminating samples


def buggy_prefill(inputs: dict[str, Any], bug: str) -> tuple[torch.Tensor, torch.Tensor]:
    """A per-token prefill with one plausible kernel bug switched on."""
    scale = inputs["scale"] or DEFAULT_SCALE
    heads = torch.arange(8) % 4 if bug == "head_mapping" else torch.arange(8) // 2
    q, k = inputs["q"].float()[:, heads], inputs["k"].float()[:, heads]
    v = inputs["v"].float()
    g = torch.exp(-inputs["A_log"].exp() * F.softplus(inputs["a"].float() + inputs["dt_bias"]))
    beta = torch.sigmoid(inputs["b"].float())
    if bug == "no_gate":
        g = torch.ones_like(g)
    out = torch.zeros(q.shape[0], 8, 128)
    new_state = torch.empty_like(inputs["state"])
    bounds = inputs["cu_seqlens"].tolist()
    for n in range(len(bounds) - 1):
        s = inputs["state"][n].transpose(-1, -2)  # [H, K, V]
        if bug == "zero_fill_empty" and bounds[n] == bounds[n + 1]:
            s = torch.zeros_like(s)
        for t in range(bounds[n], bounds[n + 1]):
            before = s
            s = g[t, :, None, None] * s
            v_old = torch.einsum("hk,hkv->hv", k[t], s)
            s = s + torch.einsum("hk,hv->hkv", k[t], beta[t, :, None] * (v[t] - v_old))
            read = before if bug == "read_before_update" else s
            out[t] = scale * torch.einsum("hk,hkv->hv", q[t], read)
        new_state[n] = s.transpose(-1, -2)
    return out.to(torch.bfloat16), new_state


@pytest.mark.parametrize("bug", ["head_mapping", "no_gate", "read_before_update",
                                 "zero_fill_empty"])
def test_samples_reject_plausible_bugs(bug: str) -> None:
    inputs, (ref_out, ref_state) = sample(PREFILL, "empty_middle_29_0_41")
    out, new_state = buggy_prefill(inputs, bug)
    assert not (within_task_tolerance(out, ref_out, PREFILL)
                and within_task_tolerance(new_state, ref_state, PREFILL))
    clean_out, clean_state = buggy_prefill(inputs, "none")  # the harness itself is fair
    assert within_task_tolerance(clean_out, ref_out, PREFILL)
    assert within_task_tolerance(clean_state, ref_state, PREFILL)
