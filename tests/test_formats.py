"""The FP4 E2M1 / UE8M0 codec against hand-computed bytes and independent arithmetic.

Also enforces the "one decoder" rule: every definition reference that embeds
``decode_fp4_e2m1`` or ``decode_ue8m0`` must carry a verbatim copy of hf_eval/data/formats.py's.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
from pathlib import Path

import pytest
import torch

from hf_eval.data import formats
from hf_eval.data.formats import (
    block_scale_exponents,
    decode_fp4_e2m1,
    decode_ue8m0,
    encode_fp4_e2m1,
    encode_ue8m0,
    quantize_fp4_e2m1_blocks,
    quantize_fp8_e4m3_blocks,
)

REPO = Path(__file__).resolve().parent.parent


def carrier(*unsigned: int) -> torch.Tensor:
    """Unsigned byte values in an int8 carrier, bit patterns unchanged."""
    return torch.tensor(unsigned, dtype=torch.uint8).view(torch.int8)


def fp4_value(code: int) -> float:
    """E2M1 by its bit fields (independent of any table): s e1 e0 m, bias 1, subnormal e=0."""
    sign = -1.0 if code & 8 else 1.0
    exponent, mantissa = (code >> 1) & 3, code & 1
    if exponent == 0:
        return sign * mantissa * 0.5
    return sign * 2.0 ** (exponent - 1) * (1.0 + mantissa / 2)


def test_decode_fp4_hand_computed_bytes() -> None:
    # 0x21: low nibble 1 (+0.5) is element 0, high nibble 2 (+1.0) element 1.
    # 0xF8: low 8 (-0), high 15 (-6). 0x7F: low 15 (-6), high 7 (+6). 0x96: +4, -0.5.
    out = decode_fp4_e2m1(carrier(0x21, 0xF8, 0x7F, 0x96, 0x00))
    assert out.dtype == torch.float32
    assert out.tolist() == [0.5, 1.0, 0.0, -6.0, -6.0, 6.0, 4.0, -0.5, 0.0, 0.0]
    assert bool(torch.signbit(out[2])) and not bool(torch.signbit(out[8]))  # -0 vs +0


def test_decode_fp4_every_byte_matches_bit_fields() -> None:
    out = decode_fp4_e2m1(carrier(*range(256)))
    expected = [v for b in range(256) for v in (fp4_value(b & 0xF), fp4_value(b >> 4))]
    assert out.tolist() == expected


def test_decode_fp4_keeps_leading_dims() -> None:
    packed = carrier(*range(24)).reshape(2, 3, 4)
    out = decode_fp4_e2m1(packed)
    assert out.shape == (2, 3, 8)
    assert torch.equal(out[1, 2], decode_fp4_e2m1(packed[1, 2]))


def test_decode_ue8m0_hand_computed_bytes() -> None:
    out = decode_ue8m0(carrier(127, 128, 126, 120, 0, 1, 254, 255))
    assert out.dtype == torch.float32
    assert out[:7].tolist() == [1.0, 2.0, 0.5, 1 / 128, 2.0 ** -127, 2.0 ** -126, 2.0 ** 127]
    assert math.isnan(out[7].item())


def test_decode_ue8m0_every_byte_is_exact() -> None:
    out = decode_ue8m0(carrier(*range(255)).reshape(5, 51)).flatten()
    assert out.tolist() == [math.ldexp(1.0, b - 127) for b in range(255)]


def test_encode_fp4_known_bytes_and_ties_to_even() -> None:
    assert encode_fp4_e2m1(torch.tensor([0.5, 1.0])).view(torch.uint8).tolist() == [0x21]
    assert encode_fp4_e2m1(torch.tensor([-0.0, -6.0])).view(torch.uint8).tolist() == [0xF8]
    # Midpoints go to the code with mantissa bit 0; beyond 6 saturates; -0.1 rounds to -0.
    x = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, 100.0, -0.1, -5.1, 0.3])
    expected = [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, -0.0, -6.0, 0.5]
    out = decode_fp4_e2m1(encode_fp4_e2m1(x))
    assert out.tolist() == expected
    assert bool(torch.signbit(out[9]))


def test_encode_decode_fp4_round_trip_every_code() -> None:
    values = torch.tensor([fp4_value(c) for c in range(16)] * 2)
    assert torch.equal(decode_fp4_e2m1(encode_fp4_e2m1(values)), values)
    with pytest.raises(ValueError):
        encode_fp4_e2m1(torch.zeros(3))


def test_block_scale_exponents_ceil_rule() -> None:
    amax = torch.tensor([448.0, 449.0, 224.0, 223.0, 1.0, 0.0, 6.0, 6.1, 3.0])
    maxes = torch.tensor([448.0] * 6 + [6.0] * 3)
    out = torch.stack([block_scale_exponents(a, float(m)) for a, m in zip(amax, maxes)])
    # 1/448 = 2**-8.8 -> -8; 6.1/6 just above 1 -> 1; 3/6 = 2**-1 exactly -> -1.
    assert out.tolist() == [0, 1, -1, -1, -8, 0, 0, 1, -1]
    assert encode_ue8m0(torch.tensor([0, -7, 127, -127])).view(torch.uint8).tolist() == [
        127, 120, 254, 0]
    with pytest.raises(ValueError):
        encode_ue8m0(torch.tensor([128]))


def test_block_quantisers_round_trip() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 64, generator=gen) * torch.tensor([[0.01], [1.0], [30.0], [1e3]])
    codes, scales = quantize_fp8_e4m3_blocks(x, 32)
    assert codes.dtype == torch.float8_e4m3fn and scales.shape == (4, 2)
    assert codes.float().abs().max() <= 448
    back = (codes.float().view(4, 2, 32) * decode_ue8m0(scales)[..., None]).view(4, 64)
    assert torch.allclose(back, x, rtol=2 ** -4, atol=0)  # 3 mantissa bits, no underflow
    packed, scales4 = quantize_fp4_e2m1_blocks(x, 32)
    assert packed.shape == (4, 32) and scales4.shape == (4, 2)
    back4 = (decode_fp4_e2m1(packed).view(4, 2, 32) * decode_ue8m0(scales4)[..., None])
    amax = x.view(4, 2, 32).abs().amax(-1, keepdim=True)
    # scale s in [amax/6, amax/3); the widest step (4 -> 6) is 2s, so the error is <= s.
    assert bool(((back4 - x.view(4, 2, 32)).abs() <= amax / 3).all())
    assert bool((back4.abs().amax(-1, keepdim=True) <= 2 * amax).all())


def embedded_decoders() -> list[tuple[str, str, str]]:
    """(definition, function name, embedded source) of every decoder copy in a reference."""
    found = []
    for path in sorted((REPO / "definitions").rglob("*.json")):
        reference = json.loads(path.read_text())["reference"]
        for node in ast.parse(reference).body:
            if isinstance(node, ast.FunctionDef) and node.name in ("decode_fp4_e2m1",
                                                                   "decode_ue8m0"):
                found.append((path.stem, node.name, ast.get_source_segment(reference, node)))
    return found


def test_grouped_gemm_references_embed_the_decoders() -> None:
    names = {(d, f) for d, f, _ in embedded_decoders()}
    for definition in ("grouped_gemm_fp8_fp4_e384_n4608_k5120_g32",
                       "grouped_gemm_fp8_fp4_e384_n5120_k2304_g32"):
        assert {(definition, "decode_fp4_e2m1"), (definition, "decode_ue8m0")} <= names


@pytest.mark.parametrize("definition,function,source", embedded_decoders(),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 80 else "")
def test_embedded_decoders_are_verbatim(definition: str, function: str, source: str) -> None:
    assert source == inspect.getsource(getattr(formats, function)).rstrip("\n"), (
        f"{definition}: {function} differs from hf_eval/data/formats.py; embed a verbatim copy")
