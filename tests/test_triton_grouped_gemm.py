"""The Triton grouped FP8 x FP4 GEMM solutions, run by Triton's CPU interpreter.

Why the interpreter: CI and development machines have no GPU; TRITON_INTERPRET=1 executes
the same kernel source with NumPy, so indexing, the FP4/UE8M0 decoding, the even/odd K
split and the device-side tile schedule are checked against the definition's reference
on small shapes (the kernel reads E, N, K from the tensors). Speed is measured only on
the H200. Skipped when triton is not installed.
"""

import os
import sys

# Triton decides interpreter or compiler when it is first imported (its own helper kernels
# are decorated then), so the variable must be set before that; if another module
# imported triton first without it, these tests cannot run in this process.
TRITON_IMPORTED_EARLIER = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1"
os.environ.setdefault("TRITON_INTERPRET", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

pytest.importorskip("triton")

from hf_eval.data.schema import Definition, Solution  # noqa: E402
from hf_eval.data.sources import compile_reference, load_entry  # noqa: E402
from hf_eval.families.grouped_gemm import generate_shaped  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")

# (definition, solution): the BF16-MMA kernel, the FP8-MMA variant and the dequantise +
# torch._grouped_mm solution of each definition.
CASES = [
    ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
     "triton_fp4_dequant_bf16_grouped_gemm_n4608_k5120"),
    ("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32",
     "triton_fp4_dequant_bf16_grouped_gemm_n5120_k2304"),
    ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
     "triton_fp4_to_fp8_mma_grouped_gemm_n4608_k5120"),
    ("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32",
     "triton_fp4_to_fp8_mma_grouped_gemm_n5120_k2304"),
    ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
     "dequant_bf16_torch_grouped_mm_n4608_k5120"),
    ("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32",
     "dequant_bf16_torch_grouped_mm_n5120_k2304"),
]


def _load(definition: str, solution: str):
    d = Definition.model_validate_json(
        (ROOT / "definitions/grouped_gemm" / f"{definition}.json").read_text())
    s = Solution.model_validate_json(
        (ROOT / "solutions/grouped_gemm" / f"{solution}.json").read_text())
    assert s.definition == d.name and s.spec.language == "triton"
    return compile_reference(d), load_entry(s)


@pytest.mark.parametrize(("definition", "solution"), CASES, ids=[s for _, s in CASES])
@pytest.mark.parametrize("params", [
    {"groups": [[0, 1]]},                               # M = 1, first expert
    {"groups": [[0, 3], [2, 19], [5, 1]]},              # a tile boundary inside an expert
    {"rows": 40, "experts": 4},                         # random routing
])
def test_matches_reference(definition, solution, params):
    reference, entry = _load(definition, solution)
    inputs = generate_shaped(definition, params, seed=3, experts=6, n=160, k=256)
    inputs = [inputs[name] for name in ("Aq", "Wq_packed", "scale_A", "scale_W", "expert_id")]
    before = [t.clone() for t in inputs]
    expected = reference(*inputs)
    got = entry.run(*inputs)
    assert got.dtype == torch.bfloat16 and got.shape == expected.shape
    torch.testing.assert_close(got.float(), expected.float(), rtol=0.016, atol=0.005)
    assert all(torch.equal(a.view(torch.uint8) if a.dtype == torch.float8_e4m3fn else a,
                           b.view(torch.uint8) if b.dtype == torch.float8_e4m3fn else b)
               for a, b in zip(inputs, before))
    # The prepared launch gives the same result twice (no state kept between calls).
    launch = entry.prepare(*inputs)
    assert torch.equal(launch(), got) and torch.equal(launch(), got)


@pytest.mark.parametrize(("definition", "solution"), CASES[:1], ids=[CASES[0][1]])
def test_wrong_scale_is_caught(definition, solution):
    """A kernel that ignored scale_W would differ: the check above can fail."""
    reference, entry = _load(definition, solution)
    inputs = generate_shaped(definition, {"groups": [[1, 5]]}, seed=4, experts=3, n=32, k=64)
    args = [inputs[n] for n in ("Aq", "Wq_packed", "scale_A", "scale_W", "expert_id")]
    expected = reference(*args)
    args[3] = (args[3].to(torch.int32) + 1).to(torch.int8)  # every weight scale doubled
    got = entry.run(*args)
    assert not torch.allclose(got.float(), expected.float(), rtol=0.016, atol=0.005)
