"""The NATTEN solutions of the four 3-D neighbourhood definitions (natten_na3d_*).

Why: these solutions call the engine's kernel, `natten.functional.na3d`, which has no wheel
on PyPI and runs its fused kernels only on a GPU with a libnatten built for it
(docs/h200/natten.md). Three layers, so each can fail on its own:

- the packaging, always: the files validate, name their definition, pin natten, target CUDA
  only (so the CPU audit never selects them), and carry the definition's kernel;
- the call and its semantics, on CPU where natten is installed (`.ci/setup --test` installs it
  without libnatten): the solution's own `run` on sample cases against the definition's
  reference under the task's tolerance (on FP32 copies, see `_check`). NATTEN then runs its
  Flex backend, whose window rule is the one its CUDA kernels share (NATTEN tests its
  backends against each other), so this checks the layout, the scale and the border windows
  of the call the GPU makes; peaked logits on a volume with borders in every dimension show
  that a window shifted by one position would fail;
- the GPU path, where CUDA and libnatten are present: the first two sample workloads of each
  definition on the GPU (the kernel-sized volume, which NATTEN sends to plain attention, and
  one with border windows, where it picks Hopper FNA on sm_90).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from packaging.requirements import Requirement

from hf_eval.data.sources import load_entry
from hf_eval.judge.acceptance import compare_outputs
from hf_eval.judge.audit import runs_on
from tests import kit

SOLUTIONS = {
    "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7": "natten_na3d_h16_d64_kt3_ky7_kx7",
    "neighborhood_attention_3d_h32_d64_kt3_ky7_kx7": "natten_na3d_h32_d64_kt3_ky7_kx7",
    "neighborhood_attention_3d_h4_d64_kt11_ky11_kx11": "natten_na3d_h4_d64_kt11_ky11_kx11",
    "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5": "natten_na3d_h8_d64_kt3_ky5_kx5",
}
NATTEN_VERSION = "0.21.7"
# The first two sample cases of each definition (the kernel-sized volume, which na3d sends to
# plain attention, and one just above it, with border windows in every dimension): NATTEN's
# eager CPU Flex path costs seconds per call, and the other cases add volume, not new paths.
SAMPLE_PARAMS = [(name, case["label"])
                 for name in sorted(SOLUTIONS) for case in kit.cases(name)[:2]]


def _has_libnatten() -> bool:
    try:
        from natten._libnatten import HAS_LIBNATTEN
    except ImportError:
        return False
    return bool(HAS_LIBNATTEN)


def _natten():
    """natten itself, or a skip naming how to install it (CI's setup installs it)."""
    return pytest.importorskip("natten", reason="natten is not installed (.ci/setup --test)")


def _check(name: str, args: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The solution's run on `args` against the reference under the task's tolerance.

    On the CPU the solution runs on FP32 copies and its output is rounded to BF16 once, as
    the reference does: NATTEN's unfused CPU Flex path on BF16 operands keeps intermediates
    in BF16 (one element of 589,824 fell 0.0156 outside the tolerance on h32 just_above_4x8x9),
    a precision property of that test-only fallback, not of the GPU kernels, whose BF16 path
    the GPU test checks. Layout, scale and windows are what the CPU run checks."""
    definition, task = kit.definition(name), kit.task(name)
    entry = load_entry(kit.solution(SOLUTIONS[name]))
    before = [a.clone() for a in args]
    expected = kit.reference(name)(*[a.cpu() for a in args])
    if args[0].is_cuda:
        got = entry.run(*args)
        assert got.dtype == torch.bfloat16
    else:
        got = entry.run(*[a.float() for a in args]).to(torch.bfloat16)
    assert got.shape == args[0].shape
    verdicts = compare_outputs(list(definition.outputs), got.cpu(), (expected,), task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) for a, b in zip(args, before)), "inputs were modified"
    return got.cpu(), expected


# --------------------------------------------------------------------------- packaging
@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_solution_is_pinned_cuda_only_and_matches_its_definition(name: str) -> None:
    solution = kit.solution(SOLUTIONS[name])  # validated by the harness schema
    assert solution.definition == name
    assert solution.spec.target_hardware == ["cuda"]
    assert not runs_on(solution, torch.device("cpu"))  # the CPU audit never selects it
    pins = {Requirement(dep).name: str(Requirement(dep).specifier)
            for dep in solution.spec.dependencies}
    assert pins.get("natten") == f"=={NATTEN_VERSION}"
    namespace = kit.reference_namespace(name)
    kernel = (namespace["KT"], namespace["KY"], namespace["KX"])
    source = solution.sources[0].content
    assert f"KERNEL = {kernel!r}" in source
    assert "na3d(Q, K, V, kernel_size=KERNEL, scale=1.0)" in source  # the engine's call


# --------------------------------------------------------------------------- CPU (Flex)
@pytest.mark.parametrize(("name", "label"), SAMPLE_PARAMS,
                         ids=[f"{n}-{label}" for n, label in SAMPLE_PARAMS])
def test_sample_case_on_cpu_within_tolerance(name: str, label: str) -> None:
    _natten()
    _check(name, kit.args(name, kit.case_inputs(name, label)))


def _peaked_inputs(name: str, volume: tuple[int, int, int], q_gain: float = 4.0) -> list:
    """BF16 Q, K, V of batch 1; Q scaled up so each query's softmax is dominated by a few
    keys (a window off by one position then changes the output beyond the tolerance)."""
    heads = kit.definition(name).axes["H"].value
    rng = np.random.default_rng(sum(volume) + heads)
    shape = (1, *volume, heads, 64)
    q, k, v = (torch.from_numpy(rng.standard_normal(shape, dtype=np.float32)) for _ in range(3))
    return [(q * q_gain).to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16)]


@pytest.mark.parametrize(("name", "volume"), [
    ("neighborhood_attention_3d_h8_d64_kt3_ky5_kx5", (4, 6, 9)),
    ("neighborhood_attention_3d_h4_d64_kt11_ky11_kx11", (12, 13, 11)),
], ids=["kt3_ky5_kx5-4x6x9", "kt11-12x13x11"])
def test_border_windows_are_the_definitions(name: str, volume: tuple[int, int, int]) -> None:
    _natten()
    got, expected = _check(name, _peaked_inputs(name, volume))
    # The check is sharp: the output of windows shifted by one position in X fails it.
    shifted = torch.roll(expected, shifts=1, dims=3)
    assert not torch.allclose(got.float(), shifted.float(), rtol=0.016, atol=0.005)


def test_refuses_cuda_without_libnatten(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA tensors without libnatten, NATTEN would run unfused FlexAttention and the
    timing would not be NATTEN's kernel: the solution raises instead."""
    _natten()
    name = "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5"
    entry = load_entry(kit.solution(SOLUTIONS[name]))
    monkeypatch.setattr(entry.module, "HAS_LIBNATTEN", False)

    class CudaTensor:  # only `is_cuda` is read before the refusal
        is_cuda = True

    with pytest.raises(RuntimeError, match="without libnatten"):
        entry.run(CudaTensor(), CudaTensor(), CudaTensor())


# --------------------------------------------------------------------------- GPU
GPU_PARAMS = [(name, index) for name in sorted(SOLUTIONS) for index in (0, 1)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.skipif(not _has_libnatten(), reason="needs natten built with libnatten")
@pytest.mark.parametrize(("name", "index"), GPU_PARAMS,
                         ids=[f"{n}-case{i}" for n, i in GPU_PARAMS])
def test_sample_workload_on_gpu(name: str, index: int) -> None:
    """The first sample workload (the kernel-sized volume, which na3d sends to plain
    attention) and the second (just above the kernel: border windows, the FNA kernel)."""
    from natten.backends import choose_backend

    label = kit.cases(name)[index]["label"]
    args = [a.cuda() for a in kit.args(name, kit.case_inputs(name, label))]
    kernel = tuple(kit.reference_namespace(name)[k] for k in ("KT", "KY", "KX"))
    assert (tuple(args[0].shape[1:4]) == kernel) == (index == 0)
    _check(name, args)
    if index == 1 and torch.cuda.get_device_capability() == (9, 0):
        q = args[0]  # what NATTEN picks for the engine's call on an H200
        assert choose_backend(q, q, q, torch_compile=False) == "hopper-fna"
