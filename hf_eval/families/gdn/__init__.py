"""The gdn family (Qwen3-Next gated delta rule, TP=4, k-last state).

One module for the family (:mod:`hf_eval.families`): its sample generator, its
value rules, its benchmark-shape inputs and its roofline counts.

Params (decode): ``{"batch_size", "state", "scale"}``; (prefill): ``{"seq_lens", "state",
"scale"}`` where ``seq_lens`` lists each sequence's length (0 allowed: an empty sequence),
``state`` is ``"model"`` (default), ``"large"`` or ``"zero"``, and ``scale`` is the scalar
input as given (``128**-0.5`` like the model, or ``0.0`` meaning "use the default").

Why the values look the way they do:
- q and k are unit vectors per head, as the model L2-normalises them before the kernel
  (the contest disables the kernel's own normalisation). Unnormalised N(0, 1) keys have
  |k|^2 = 128, which makes the delta rule's (I - beta k k^T) expand the state by about
  100x per token: a recurrence no model runs.
- v ~ N(0, 1); a and b ~ N(0, 1) so beta = sigmoid(b) spans about (0.1, 0.9).
- A_log = log(uniform(1, 16)) per head (the model's initialisation). dt_bias is the
  inverse softplus of dt drawn log-uniformly in [1e-3, 1e-1] (Mamba's dt initialisation):
  a small time step, so the gate g = exp(-exp(A_log) softplus(a + dt_bias)) has a median
  of about 0.95 and spans about 0.999 (long memory) down to 0.1 (fast forgetting; 1st
  percentile) across heads and tokens, like a trained model, rather than forgetting
  everything within a few tokens (an N(0, 1)-sized dt_bias gives g ~ exp(-A) ~ 0).
- The incoming state is what a model holds after many tokens: with unit keys and unit
  values a saturated state has entries of standard deviation about 1, so ``"model"``
  draws N(0, sigma) with sigma ~ uniform(0.25, 1.5) per (sequence, head); ``"large"``
  uses sigma ~ uniform(16, 64) (a layer with large value activations), which exposes
  kernels that lose relative precision; ``"zero"`` is a fresh request.
A_log and dt_bias are layer weights: drawn from ``rng(definition, name)`` independent of
the case seed, so every workload of a definition shares (and stores) one copy.

**Value rules** (what the checker adds to shapes, dtypes and constraints):

- ``cu_seqlens`` (prefill) must partition the packed tokens: start at 0, never decrease
  (equal neighbours are allowed: an empty sequence) and end at total_seq_len, the length
  of q. Anything else makes sequences overlap or tokens belong to no sequence.
- ``scale`` must be finite and >= 0: 0 is the contract's spelling of "the default
  128**-0.5" (FlashInfer Trace scalars cannot be None); a negative scale is no model's.
- Every floating-point tensor must be finite: a NaN or infinity in the inputs makes the
  reference's output non-finite, and the published acceptance then fails every candidate.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.families.base import Family, Inputs
from hf_eval.families.common import finite_problems, normal, randn, rng

DECODE = "gdn_decode_qk4_v8_d128_k_last"
PREFILL = "gdn_prefill_qk4_v8_d128_k_last"
NUM_QK_HEADS, NUM_V_HEADS, HEAD_SIZE = 4, 8, 128

#: Per-(sequence, head) standard deviation range of the incoming state, by params["state"].
STATE_STD: dict[str, tuple[float, float]] = {"model": (0.25, 1.5), "large": (16.0, 64.0)}


def unit_vectors(gen: np.random.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    """Gaussian directions normalised along the last axis, rounded to bf16.

    The norm is taken in FP64 so that regenerating on another machine (other SIMD paths)
    cannot change a bf16 rounding decision in practice.
    """
    values = gen.standard_normal(size=shape, dtype=np.float32)
    norms = np.sqrt(np.square(values.astype(np.float64)).sum(axis=-1, keepdims=True))
    return torch.from_numpy((values / norms).astype(np.float32)).to(torch.bfloat16)


def gate_weights(definition: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The layer's A_log and dt_bias ([8] fp32 each), independent of the case seed."""
    a_gen = rng(definition, "A_log")
    a_log = np.log(a_gen.uniform(1.0, 16.0, size=NUM_V_HEADS))
    dt_gen = rng(definition, "dt_bias")
    dt = np.exp(dt_gen.uniform(np.log(1e-3), np.log(1e-1), size=NUM_V_HEADS))
    dt_bias = np.log(np.expm1(dt))  # inverse softplus
    return (torch.from_numpy(a_log.astype(np.float32)),
            torch.from_numpy(dt_bias.astype(np.float32)))


def initial_state(gen: np.random.Generator, kind: str, num_seqs: int) -> torch.Tensor:
    """The incoming k-last state [num_seqs, 8, 128, 128] fp32 of the given kind."""
    shape = (num_seqs, NUM_V_HEADS, HEAD_SIZE, HEAD_SIZE)
    if kind == "zero":
        return torch.zeros(shape, dtype=torch.float32)
    if kind not in STATE_STD:
        raise ValueError(f"state must be 'model', 'large' or 'zero', not {kind!r}")
    low, high = STATE_STD[kind]
    sigma = gen.uniform(low, high, size=(num_seqs, NUM_V_HEADS, 1, 1)).astype(np.float32)
    values = gen.standard_normal(size=shape, dtype=np.float32) * sigma
    return torch.from_numpy(values)


def generate(definition: Definition, params: dict, seed: int) -> Inputs:
    """Every input of ``definition`` by name, deterministic in (definition, params, seed)."""
    definition_name = definition.name
    if definition_name == DECODE:
        num_seqs = int(params["batch_size"])
        tokens = num_seqs
    elif definition_name == PREFILL:
        seq_lens = [int(n) for n in params["seq_lens"]]
        if not seq_lens or min(seq_lens) < 0:
            raise ValueError("seq_lens must list at least one non-negative length")
        num_seqs, tokens = len(seq_lens), sum(seq_lens)
    else:
        raise ValueError(f"{definition_name!r} is not a gdn definition")

    def draw(name: str) -> np.random.Generator:
        return rng(definition_name, seed, name)

    q = unit_vectors(draw("q"), (tokens, NUM_QK_HEADS, HEAD_SIZE))
    k = unit_vectors(draw("k"), (tokens, NUM_QK_HEADS, HEAD_SIZE))
    v = normal(draw("v"), (tokens, NUM_V_HEADS, HEAD_SIZE))
    a = normal(draw("a"), (tokens, NUM_V_HEADS))
    b = normal(draw("b"), (tokens, NUM_V_HEADS))
    state = initial_state(draw("state"), str(params.get("state", "model")), num_seqs)
    a_log, dt_bias = gate_weights(definition_name)
    scale = float(params["scale"])

    if definition_name == DECODE:  # one token per request: [B, 1, ...]
        q, k, v, a, b = (x.unsqueeze(1) for x in (q, k, v, a, b))
        return {"q": q, "k": k, "v": v, "state": state, "A_log": a_log, "a": a,
                "dt_bias": dt_bias, "b": b, "scale": scale}
    cu_seqlens = torch.tensor([0] + np.cumsum(seq_lens).tolist(), dtype=torch.int64)
    return {"q": q, "k": k, "v": v, "state": state, "A_log": a_log, "a": a,
            "dt_bias": dt_bias, "b": b, "cu_seqlens": cu_seqlens, "scale": scale}


# ------------------------------------------------------------------ value rules
FLOAT_INPUTS = ("q", "k", "v", "state", "A_log", "a", "dt_bias", "b")


def scale_problems(scale: object) -> list[str]:
    """The scalar ``scale`` must be a finite number >= 0 (0 means 128**-0.5)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        return [f"scale: must be a number (0 means 128**-0.5), not {type(scale).__name__}"]
    if not math.isfinite(scale) or scale < 0:
        return [f"scale: must be finite and >= 0 (0 means 128**-0.5); got {scale}"]
    return []


def cu_seqlens_problems(cu_seqlens: torch.Tensor, total_seq_len: int) -> list[str]:
    """``cu_seqlens`` must start at 0, be non-decreasing and end at total_seq_len."""
    values = cu_seqlens.detach().to(device="cpu", dtype=torch.int64).flatten()
    if values.numel() == 0:
        return ["cu_seqlens: must hold num_seqs + 1 >= 2 boundaries; it is empty"]
    problems = []
    if int(values[0]) != 0:
        problems.append(f"cu_seqlens: must start at 0; cu_seqlens[0] = {int(values[0])}")
    drops = (values[1:] < values[:-1]).nonzero().flatten()
    if drops.numel() > 0:
        i = int(drops[0])
        problems.append(f"cu_seqlens: must be non-decreasing (sequence lengths >= 0); "
                        f"{drops.numel()} decreases, first cu_seqlens[{i + 1}] = "
                        f"{int(values[i + 1])} < cu_seqlens[{i}] = {int(values[i])}")
    if int(values[-1]) != total_seq_len:
        problems.append(f"cu_seqlens: must end at total_seq_len = {total_seq_len} (the length "
                        f"of q); cu_seqlens[-1] = {int(values[-1])}")
    return problems


def check(definition: str, inputs: Inputs) -> list[str]:
    """One message per violated value rule of a gdn workload; empty when valid."""
    problems = finite_problems(inputs, FLOAT_INPUTS)
    if "scale" in inputs:
        problems += scale_problems(inputs["scale"])
    cu_seqlens, q = inputs.get("cu_seqlens"), inputs.get("q")
    if isinstance(cu_seqlens, torch.Tensor) and isinstance(q, torch.Tensor):
        problems += cu_seqlens_problems(cu_seqlens, int(q.shape[0]))
    return problems


# ------------------------------------------------------------------ benchmark shapes (device)
class BenchStructure(BaseModel):
    """Prefill shapes: each sequence's length (num_seqs of them, total_seq_len in all)."""

    model_config = ConfigDict(extra="forbid")
    seq_lens: list[NonNegativeInt] | None = None
    """Each sequence's length in tokens: ``num_seqs`` of them summing to ``total_seq_len``.
    Required by a prefill shape; None for a decode shape (``batch_size``), which ignores
    it."""


def bench_inputs(d: Definition, axes: dict[str, int], s: BenchStructure,
                 gen: torch.Generator, dev: str) -> Inputs:
    """Unit q and k, a model-like gate, a state of std 0.5; decode when ``batch_size``."""
    hq, hv, dd = d.const_axes["num_q_heads"], d.const_axes["num_v_heads"], d.const_axes["head_size"]
    if "batch_size" in axes:
        n = t = axes["batch_size"]
    else:
        if s.seq_lens is None:
            raise DataError(d.name, "a prefill benchmark shape needs structure.seq_lens")
        lens = s.seq_lens
        n, t = len(lens), sum(lens)
        if (n, t) != (axes["num_seqs"], axes["total_seq_len"]):
            raise DataError(d.name, "seq_lens disagree with num_seqs / total_seq_len")

    def unit(shape):
        x = torch.randn(shape, generator=gen, device=dev)
        return (x / x.norm(dim=-1, keepdim=True)).to(torch.bfloat16)

    u = torch.rand(hv, generator=gen, device=dev)
    inputs: Inputs = {
        "q": unit((t, hq, dd)), "k": unit((t, hq, dd)), "v": randn(gen, (t, hv, dd), device=dev),
        "state": randn(gen, (n, hv, dd, dd), 0.5, torch.float32, dev),
        "A_log": torch.log(1.0 + 15.0 * u), "a": randn(gen, (t, hv), device=dev),
        "dt_bias": torch.log(torch.expm1(torch.exp(math.log(1e-3) + u * math.log(100.0)))),
        "b": randn(gen, (t, hv), device=dev), "scale": dd ** -0.5}
    if "batch_size" in axes:
        for name in ("q", "k", "v", "a", "b"):
            inputs[name] = inputs[name].unsqueeze(1)
        return inputs
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), dtype=torch.int64)
    order = ["q", "k", "v", "state", "A_log", "a", "dt_bias", "b"]
    return {**{k: inputs[k] for k in order}, "cu_seqlens": cu.to(dev), "scale": inputs["scale"]}


FAMILY = Family(op_type="gdn", module=__name__, generate=generate, check=check,
                bench_inputs=bench_inputs, bench_structure=BenchStructure)
