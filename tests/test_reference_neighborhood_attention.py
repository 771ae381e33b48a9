"""The neighborhood_attention references, solutions, sample generator, cases and tasks.

The references are the truth, so they are checked against formulations that share no code
with them: the 1-D window rule against a brute-force "k nearest positions" enumeration and
NATTEN's own formula; the whole operator against FP64 dense attention under an explicit
window mask built from that enumeration; plain full attention when the volume equals the
kernel; and a probe (Q = 0, so every window key weighs the same) whose output is the mean
coordinate of each window. The solutions and the sample data are then checked against the
references under the task's own tolerance, and the sample data is shown to be discriminating.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from flashinfer_bench.data import Definition

from hf_eval.families import neighborhood_attention as gen
from hf_eval.families.common import normal, rng
from tests import kit

OP = "neighborhood_attention"
NAMES = tuple(gen.KERNELS)
Inputs = dict[str, torch.Tensor]


definition = kit.definition_json
reference = kit.reference
cases = kit.cases
solutions = kit.solutions_json_for
task = kit.task_json


def torch_solution(name: str) -> dict[str, Any]:
    """This family's plain-PyTorch solution (the baseline and the CPU preference)."""
    (sol,) = [s for s in solutions(name) if s["name"].startswith("torch_")]
    return sol


def solution_module(name: str) -> dict[str, Any]:
    return kit.solution_namespace(torch_solution(name)["name"])


def runs_on(sol: dict[str, Any], device: str) -> bool:
    """Whether a solution declares the device ("cpu" or "cuda") among its targets."""
    return device in sol["spec"]["target_hardware"]


@functools.cache
def sample(name: str, label: str) -> tuple[Inputs, torch.Tensor]:
    """A sample case's inputs and its reference output on CPU (computed once per session)."""
    inputs = kit.fresh_case_inputs(name, label)
    return inputs, reference(name)(inputs["Q"], inputs["K"], inputs["V"])


def activations(seed: int, shape: tuple[int, ...], std: float = 1.0) -> torch.Tensor:
    """Normal bf16 test input (not the generator's)."""
    return normal(rng("test_neighborhood", seed, *shape), shape, std=std)


def nearest_window(index: int, length: int, kernel: int) -> list[int]:
    """Brute force: the ``kernel`` positions of [0, length) nearest to ``index``.

    For odd kernels this is NATTEN's window: centred where it fits, otherwise the border
    side is cut and the nearest positions on the other side fill it up. The k-th and
    (k+1)-th distances differ, so the set is unambiguous (asserted).
    """
    by_distance = sorted(range(length), key=lambda j: abs(j - index))
    if length > kernel:
        assert abs(by_distance[kernel - 1] - index) != abs(by_distance[kernel] - index)
    return sorted(by_distance[:kernel])


def natten_window_start(index: int, length: int, kernel: int) -> int:
    """NATTEN's get_window_start for dilation 1 (its CPU/CUDA kernels' formula)."""
    half = kernel // 2
    return max(index - half, 0) + (index + half >= length) * (length - index - half - 1)


def window_mask(volume: tuple[int, ...], kernel: tuple[int, ...]) -> torch.Tensor:
    """[N, N] bool, query row-major (t, y, x), key likewise: key inside the query's window."""
    per_dim = []
    for length, k in zip(volume, kernel, strict=True):
        m = torch.zeros(length, length, dtype=torch.bool)
        for i in range(length):
            m[i, nearest_window(i, length, k)] = True
        per_dim.append(m)
    mt, my, mx = per_dim
    full = (mt[:, None, None, :, None, None] & my[None, :, None, None, :, None]
            & mx[None, None, :, None, None, :])
    n = volume[0] * volume[1] * volume[2]
    return full.reshape(n, n)


def masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     kernel: tuple[int, ...], scale: float = 1.0, mask: torch.Tensor | None = None,
                     dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Dense attention over [B, T, Y, X, H, D] under an explicit mask (default: the windows)."""
    B, T, Y, X, H, D = q.shape
    if mask is None:
        mask = window_mask((T, Y, X), kernel)
    qd, kd, vd = (t.to(dtype).reshape(B, T * Y * X, H, D).transpose(1, 2) for t in (q, k, v))
    out = F.scaled_dot_product_attention(qd, kd, vd, attn_mask=mask, scale=scale)
    return out.transpose(1, 2).reshape(q.shape)


def kernel_of(name: str) -> tuple[int, int, int]:
    return gen.KERNELS[name]


def heads_of(name: str) -> int:
    return kit.definition(name).const_axes["H"]


# ----------------------------------------------------------------------- definitions
@pytest.mark.parametrize("name", NAMES)
def test_definition_loads_in_flashinfer_bench(name: str) -> None:
    parsed = Definition.model_validate(definition(name))
    assert parsed.name == name and parsed.op_type == OP
    assert parsed.const_axes == {"H": heads_of(name), "D": 64}
    assert parsed.var_axes == ["B", "T", "Y", "X"]
    assert list(parsed.inputs) == ["Q", "K", "V"]
    assert list(parsed.outputs) == ["output"]
    for spec in [*parsed.inputs.values(), *parsed.outputs.values()]:
        assert spec.shape == ["B", "T", "Y", "X", "H", "D"] and spec.dtype == "bfloat16"
    kt, ky, kx = kernel_of(name)
    assert parsed.constraints == ["B >= 1", f"T >= {kt}", f"Y >= {ky}", f"X >= {kx}"]
    assert name.endswith(f"_h{heads_of(name)}_d64_kt{kt}_ky{ky}_kx{kx}")


# ------------------------------------------------------------------------ references
@pytest.mark.parametrize("name", NAMES)
def test_window_rule_is_nearest_neighbours_and_natten_formula(name: str) -> None:
    """The reference's per-dimension windows, for every length from k to k + 8."""
    neighbours = kit.reference_namespace(name)["neighbour_indices"]
    for kernel in sorted(set(kernel_of(name)) | {1, 3, 5}):
        for length in range(kernel, kernel + 9):
            table = neighbours(length, kernel, torch.device("cpu"))
            assert table.shape == (length, kernel)
            for i in range(length):
                want = nearest_window(i, length, kernel)
                assert table[i].tolist() == want, (kernel, length, i)
                assert want[0] == natten_window_start(i, length, kernel)


VOLUMES = {
    "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7": (2, 5, 9, 8),
    "neighborhood_attention_3d_h32_d64_kt3_ky7_kx7": (1, 4, 8, 10),
    "neighborhood_attention_3d_h4_d64_kt11_ky11_kx11": (1, 11, 12, 11),
    "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5": (2, 6, 7, 9),
}


@pytest.mark.parametrize("name", NAMES)
def test_reference_matches_fp64_masked_attention(name: str) -> None:
    """Dense FP64 attention with an explicit window mask; logits std about 3 (Q std 0.4)."""
    batch, *volume = VOLUMES[name]
    shape = (batch, *volume, heads_of(name), 64)
    q, k, v = activations(1, shape, 0.4), activations(2, shape), activations(3, shape)
    exact = masked_attention(q, k, v, kernel_of(name))
    kit.assert_bf16_rounding_of(reference(name)(q, k, v), exact)


@pytest.mark.parametrize("name", NAMES)
def test_reference_is_full_attention_when_the_volume_is_the_kernel(name: str) -> None:
    """T, Y, X equal to the kernel: every query sees every key (FP64 SDPA without a mask)."""
    label = next(c["label"] for c in cases(name) if c["label"].startswith("kernel_volume"))
    inputs, ref = sample(name, label)
    q, k, v = (inputs[key] for key in ("Q", "K", "V"))
    assert tuple(q.shape[1:4]) == kernel_of(name)
    B, T, Y, X, H, D = q.shape
    qd, kd, vd = (t.double().reshape(B, -1, H, D).transpose(1, 2) for t in (q, k, v))
    exact = F.scaled_dot_product_attention(qd, kd, vd, scale=1.0).transpose(1, 2)
    kit.assert_bf16_rounding_of(ref, exact.reshape(q.shape))


@pytest.mark.parametrize("name", NAMES)
def test_reference_window_probe(name: str) -> None:
    """Q = 0 gives equal weights, so V = key coordinates yields each window's mean coordinate.

    Channels 0-2 of V hold t', y', x', channel 3 holds 1 (weights sum to one); the expected
    means come from the brute-force windows. The volume exceeds the kernel by 0-3 positions.
    """
    kernel = kernel_of(name)
    volume = tuple(k + extra for k, extra in zip(kernel, (1, 0, 3), strict=True))
    T, Y, X = volume
    H = heads_of(name)
    q = torch.zeros(1, T, Y, X, H, 64, dtype=torch.bfloat16)
    k = activations(4, q.shape)
    v = activations(5, q.shape)
    grid = torch.stack(torch.meshgrid(torch.arange(T), torch.arange(Y), torch.arange(X),
                                      indexing="ij"), dim=-1)  # [T, Y, X, 3]
    v[0, ..., :3] = grid[:, :, :, None, :].to(torch.bfloat16)
    v[0, ..., 3] = 1.0
    out = reference(name)(q, k, v).double()
    for axis, (length, kk) in enumerate(zip(volume, kernel, strict=True)):
        mean = torch.tensor([sum(nearest_window(i, length, kk)) / kk for i in range(length)],
                            dtype=torch.float64)
        shape = [1, 1, 1]
        shape[axis] = length
        want = mean.reshape(shape).expand(T, Y, X)[..., None].expand(T, Y, X, H)
        torch.testing.assert_close(out[0, ..., axis], want, rtol=2 ** -8, atol=0.0)
    torch.testing.assert_close(out[0, ..., 3], torch.ones(T, Y, X, H, dtype=torch.float64))


@pytest.mark.parametrize("name", NAMES)
def test_reference_does_not_mutate_inputs(name: str) -> None:
    """sample() ran the reference on these very tensors; they still equal fresh ones."""
    for case in cases(name):
        inputs, _ = sample(name, case["label"])
        fresh = kit.fresh_case_inputs(name, case["label"])
        for key, value in inputs.items():
            assert torch.equal(value, fresh[key]), (case["label"], key)


# ------------------------------------------------------------------------- solutions
@kit.over_solution_cases(NAMES, kit.DEVICES, runs_on)
def test_solution_matches_reference_on_samples(name: str, solution: str, label: str,
                                               device: str) -> None:
    module = kit.solution_namespace(solution)  # the file validated by the schema
    inputs, ref = sample(name, label)
    args = [inputs[key].to(device) for key in ("Q", "K", "V")]
    before = [a.clone() for a in args]
    tol = task(name)["tolerance"]
    assert tol["required_matched_ratio"] is None  # every element must match
    launch = module["prepare"](*args)
    for out in (module["run"](*args), launch(), launch()):
        assert out.shape == ref.shape and out.dtype == ref.dtype
        assert out.device == args[0].device and out.is_contiguous()
        assert all(out.data_ptr() != a.data_ptr() for a in args)
        assert kit.matched_ratio(out, ref, tol) == 1.0
    kit.assert_unchanged(args, before)


TILINGS = {
    "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7": ("interior_5x10x11", [(2, 3, 4), (5, 8, 1)]),
    "neighborhood_attention_3d_h32_d64_kt3_ky7_kx7": ("just_above_4x8x9", [(3, 5, 2)]),
    "neighborhood_attention_3d_h4_d64_kt11_ky11_kx11": ("interior_13x13x14", [(5, 4, 6)]),
    "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5": ("interior_8x12x14", [(1, 1, 1), (3, 5, 4),
                                                                          (8, 7, 14)]),
}


@pytest.mark.parametrize("name", NAMES)
def test_solution_tiled_path_matches_reference(name: str) -> None:
    """Forced tile shapes, including ones that do not divide the volume (overlapping last tile)."""
    module = solution_module(name)
    label, tilings = TILINGS[name]
    inputs, ref = sample(name, label)
    tol = task(name)["tolerance"]
    for tiles in tilings:
        out = module["prepare"](inputs["Q"], inputs["K"], inputs["V"], tiles=tiles)()
        assert out.shape == ref.shape and out.dtype == ref.dtype and out.is_contiguous()
        assert kit.matched_ratio(out, ref, tol) == 1.0, tiles


@pytest.mark.parametrize("name", NAMES)
def test_solution_tiles_keep_large_volumes_bounded(name: str) -> None:
    """The volume equal to the kernel is one dense tile; a large video volume gets key boxes
    a few windows wide, so the mask and the work stay within a small multiple of the
    windows' own size (dense attention would be N / W = hundreds of times larger)."""
    choose = solution_module(name)["choose_tiles"]
    kernel = kernel_of(name)
    assert choose(kernel) == kernel  # the volume is the kernel: one dense tile
    large = (16, 64, 96)
    tiles = choose(large)
    n = lq = lk = 1
    for length, k, t in zip(large, kernel, tiles, strict=True):
        n *= -(-length // t)
        lq *= t
        lk *= min(length, t + k - 1)
    tokens = large[0] * large[1] * large[2]
    window = kernel[0] * kernel[1] * kernel[2]
    assert n * lq * lk <= 8 * tokens * window  # mask elements and query-key products
    assert n * lq < 1.25 * tokens  # few duplicated query rows


@pytest.mark.parametrize("name", NAMES)
def test_samples_reject_a_truncated_window_or_the_wrong_scale(name: str) -> None:
    """Plausible wrong kernels fail: windows clipped at the borders instead of shifted,
    and the usual D**-0.5 scale applied although Q is pre-scaled."""
    tol = task(name)["tolerance"]
    kernel = kernel_of(name)
    for case in cases(name):
        inputs, ref = sample(name, case["label"])
        q, k, v = (inputs[key] for key in ("Q", "K", "V"))
        volume = tuple(q.shape[1:4])
        wrong_scale = masked_attention(q, k, v, kernel, scale=64 ** -0.5, dtype=torch.float32)
        assert kit.matched_ratio(wrong_scale, ref, tol) < 0.5, case["label"]
        if volume == kernel:
            continue
        clipped = [(torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs() <= kk // 2
                   for n, kk in zip(volume, kernel, strict=True)]
        mask = (clipped[0][:, None, None, :, None, None] & clipped[1][None, :, None, None, :, None]
                & clipped[2][None, None, :, None, None, :]).reshape(ref[0, ..., 0, 0].numel(), -1)
        truncated = masked_attention(q, k, v, kernel, mask=mask, dtype=torch.float32)
        assert kit.matched_ratio(truncated, ref, tol) < 0.5, case["label"]


# ------------------------------------------------------------------- generator, cases
@pytest.mark.parametrize("name", NAMES)
def test_generator_is_deterministic_with_the_definition_shapes(name: str) -> None:
    spec = definition(name)
    for case in cases(name):
        first, second = kit.generated_twice(gen.generate, name, case)
        axes = {**case["params"], "H": heads_of(name), "D": 64}
        for key, tensor in first.items():
            want = spec["inputs"][key]
            assert tuple(tensor.shape) == tuple(axes[a] for a in want["shape"]), key
            assert tensor.dtype == torch.bfloat16 and tensor.is_contiguous()
            assert tensor.view(torch.int16).numpy().tobytes() == \
                second[key].view(torch.int16).numpy().tobytes(), key
            assert bool(torch.isfinite(tensor).all())
        assert 0.15 < first["Q"].float().std().item() < 0.5  # pre-scaled queries
        assert 0.7 < first["K"].float().std().item() < 1.5
        assert 0.7 < first["V"].float().std().item() < 2.0
        if case["params"]["B"] > 1:
            assert not torch.equal(first["V"][0], first["V"][1])


def test_generator_depends_on_the_seed_and_rejects_small_volumes() -> None:
    name = NAMES[-1]
    params = {"B": 1, "T": 3, "Y": 5, "X": 5}
    definition = kit.definition(name)
    assert not torch.equal(gen.generate(definition, params, 1)["Q"],
                           gen.generate(definition, params, 2)["Q"])
    with pytest.raises(ValueError, match="kernel"):
        gen.generate(definition, {"B": 1, "T": 3, "Y": 4, "X": 5}, 0)
    with pytest.raises(ValueError, match="not a neighborhood_attention definition"):
        gen.generate(kit.definition("noncausal_dense_attention_h32_d64"), params, 0)


@pytest.mark.parametrize("name", NAMES)
def test_cases_cover_the_required_edge_cases(name: str) -> None:
    kernel = kernel_of(name)
    params = [c["params"] for c in cases(name)]
    extents = [tuple(p[a] - k for a, k in zip("TYX", kernel, strict=True)) for p in params]
    assert len(params) >= 4 and len({c["label"] for c in cases(name)}) == len(params)
    assert (0, 0, 0) in extents  # the volume is the kernel
    assert any(1 in e and 2 in e for e in extents)  # k + 1 and k + 2: every border shift
    assert any(min(e) >= 2 and sum(e) >= 6 for e in extents)  # larger, with interior windows
    assert any(p["B"] > 1 for p in params)


# ------------------------------------------------------------------------------ tasks
@pytest.mark.parametrize("name", NAMES)
def test_task_config(name: str) -> None:
    config = kit.checked_task_config(name, f"workloads/{OP}/{name}.jsonl", kit.LTX_ALLCLOSE)
    sol = torch_solution(name)
    assert runs_on(sol, "cpu") and runs_on(sol, "cuda")
    # SGLang's FlexAttention path, audited on the H200
    # (results/h200/2026-12-02-0232-library-engine-audits: h8;
    # results/h200/2026-12-02-0616-engine-baselines-natten-topk: h16, h32, h4); the engine
    # calls NATTEN instead when it is installed (natten_na3d_*)
    assert config["engine_baseline"] == "sglang_flex_na3d_" + name.removeprefix(
        "neighborhood_attention_3d_")
    assert config["baseline"] == {"solution": sol["name"], "timed": "launch"}
    assert "def prepare(" in sol["sources"][0]["content"]
    assert config["preferred"]["cpu"]["solution"] == sol["name"]
    assert config["timing"] == {"warmup": 10, "iters": 50, "trials": 3}
