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

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from hf_eval.data.formats import decode_fp4_e2m1, decode_ue8m0  # noqa: E402
from hf_eval.data.schema import Definition, Solution  # noqa: E402
from hf_eval.data.sources import compile_reference, load_entry  # noqa: E402
from hf_eval.families.grouped_gemm import generate_shaped  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")

# (definition, solution): the BF16-MMA kernel, the FP8-MMA variant, the prescaled BF16
# kernel and the dequantise + torch._grouped_mm solution of each definition.
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
     "triton_prescaled_bf16_grouped_gemm_n4608_k5120"),
    ("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32",
     "triton_prescaled_bf16_grouped_gemm_n5120_k2304"),
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


# ---------------------------------------------------------------- the prescaled BF16 kernel
# Its two conversions are checked value by value against hf_eval's decoders, at the format's
# edges: every FP4 code and FP8 code under UE8M0 bytes from 0 (2**-127) to 254 (2**127),
# where results are BF16 subnormals, round to zero or overflow to infinity.
PRESCALED = ("grouped_gemm_fp8_fp4_e384_n5120_k2304_g32",
             "triton_prescaled_bf16_grouped_gemm_n5120_k2304")
WEIGHT_SCALE_BYTES = (0, 1, 2, 100, 127, 200, 254)
ACTIVATION_SCALE_BYTES = (0, 1, 2, 5, 100, 127, 200, 254)

#: The solution module whose weight conversion the probe kernel calls (set by the test).
_SOLUTION = None


@triton.jit
def _weight_probe(W, SW, OUT, KW: tl.constexpr, G: tl.constexpr):
    """Row ``program_id`` of 32-bit weight words through the solution's conversion: the
    operand value of every code, at k = 8 * word + code index. The interpreter runs the
    float32 widening of the BF16 bits (MMA_F32), the path the CPU can execute."""
    row = tl.program_id(0)
    words = tl.arange(0, KW)
    word = tl.load(W + row * KW + words)
    scale = _SOLUTION._ue8m0_bf16_bits(tl.load(SW + row * (KW * 8 // G) + words * 8 // G))
    for q in tl.static_range(4):
        low, high = _SOLUTION._code_pair(word, q, scale, True)
        tl.store(OUT + row * KW * 8 + words * 8 + q, low)
        tl.store(OUT + row * KW * 8 + words * 8 + q + 4, high)


def _prescaled_module():
    """The prescaled solution's module, imported from its JSON like any solution."""
    return _load(*PRESCALED)[1].module


def test_prescaled_weight_conversion_is_exact_for_every_code_and_scale():
    global _SOLUTION
    _SOLUTION = _prescaled_module()
    # Word w, code index i holds code (w + i) % 16: every code at every nibble position.
    w, i = torch.meshgrid(torch.arange(16), torch.arange(8), indexing="ij")
    codes = ((w + i) % 16).flatten()                                     # k = 8 w + i
    packed = (codes[0::2] | (codes[1::2] << 4)).to(torch.uint8).view(torch.int8)
    rows = len(WEIGHT_SCALE_BYTES)
    wq = packed.repeat(rows, 1)                                          # [rows, 64] bytes
    scales = torch.tensor(WEIGHT_SCALE_BYTES, dtype=torch.uint8).view(torch.int8)
    scales = scales[:, None].repeat(1, codes.numel() // 32)              # one byte per 32 k
    got = torch.empty(rows, codes.numel(), dtype=torch.float32)
    _weight_probe[(rows,)](wq.view(torch.int32), scales, got, KW=16, G=32)
    expected = decode_fp4_e2m1(wq) * decode_ue8m0(scales).repeat_interleave(32, dim=1)
    # Bit for bit: signed zeros, BF16 subnormals (bytes 0 and 1) and infinities (254); and
    # every operand is a BF16 number (its float32 bits end in 16 zeros).
    assert torch.equal(got.view(torch.int32), expected.view(torch.int32))
    assert torch.equal(got.view(torch.int32) & 0xFFFF, torch.zeros_like(got, dtype=torch.int32))
    assert ((expected.abs() < 2.0 ** -126) & (expected != 0)).any()
    assert expected.isinf().any()


def test_prescaled_activations_equal_fp32_dequantisation_rounded_to_bf16():
    module = _prescaled_module()
    codes = torch.arange(256, dtype=torch.int32)
    codes[(codes & 0x7F) == 0x7F] = 0                                  # no FP8 NaN codes
    rows = len(ACTIVATION_SCALE_BYTES)
    aq = codes.to(torch.uint8).repeat(rows, 1).view(torch.float8_e4m3fn)  # [rows, 256]
    scales = torch.tensor(ACTIVATION_SCALE_BYTES, dtype=torch.uint8).view(torch.int8)
    scales = scales[:, None].repeat(1, 256 // 32)
    got = torch.empty(rows, 256, dtype=torch.bfloat16)
    module._prescale_kernel[(triton.cdiv(rows, 16), 2)](aq, scales, got, rows, K=256, G=32,
                                                         BR=16, BC=128)
    fp32 = (aq.float().unflatten(-1, (-1, 32))
            * decode_ue8m0(scales).unsqueeze(-1)).flatten(-2)
    # The documented column order: within every 8 columns, k = 8j + q + 4h sits at
    # 8j + 2q + h (the GEMM's weight operand order).
    expected = fp32.to(torch.bfloat16).unflatten(-1, (-1, 2, 4)).transpose(-1, -2).flatten(-3)
    assert torch.equal(got.view(torch.int16), expected.view(torch.int16))
    # The crafted bytes reach every regime: rounding to zero below 2**-134, rounded BF16
    # subnormals and overflow.
    assert ((fp32 != 0) & (fp32.to(torch.bfloat16) == 0)).any()
    assert (fp32.to(torch.bfloat16).float() != fp32).any()
    assert fp32.isinf().any()
