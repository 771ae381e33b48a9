"""The mixed-cache MLA decode reference, its torch solution and its sample generator.

The reference is checked against an independent formulation: the whole cache is decoded
bit by bit in NumPy (sign/exponent/mantissa arithmetic, no torch float8 view, no lookup
table) into dense FP64 [tokens, 576] keys, and attention is computed densely over the
distinct selected slots weighted by their multiplicity, in FP64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from flashinfer_bench.data import Definition as FIDefinition
from flashinfer_bench.data import Solution as FISolution

from hf_eval.families import mixed_mla
from tests import kit

NAME = "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512"
SOLUTION = "torch_gather_dequant_mixed_mla_h64"
INPUT_ORDER = ["Q", "KV8", "KV4", "indices8", "indices4", "attn_sink", "sm_scale"]


# This file's definition and solution, loaded through the harness (tests/kit.py).
definition, reference, solution, cases, case_inputs, case_reference, LABELS = kit.bind(
    NAME, SOLUTION)


# ----------------------------------------------------------------- independent decoder
def _fp8_e4m3_value(byte: np.ndarray) -> np.ndarray:
    """FP8 E4M3FN by its bit fields: bias 7, subnormals at exponent 0, S.1111.111 = NaN."""
    sign = np.where(byte & 0x80, -1.0, 1.0)
    exponent = ((byte >> 3) & 0xF).astype(np.float64)
    mantissa = (byte & 0x7).astype(np.float64)
    normal = (1.0 + mantissa / 8.0) * np.exp2(exponent - 7.0)
    subnormal = (mantissa / 8.0) * 2.0 ** -6
    value = sign * np.where(exponent == 0, subnormal, normal)
    return np.where((byte & 0x7F) == 0x7F, np.nan, value)


def _fp4_e2m1_value(nibble: np.ndarray) -> np.ndarray:
    """FP4 E2M1 by its bit fields: bias 1, exponent 0 is subnormal (0 or 0.5)."""
    sign = np.where(nibble & 0x8, -1.0, 1.0)
    exponent = ((nibble >> 1) & 0x3).astype(np.float64)
    mantissa = (nibble & 0x1).astype(np.float64)
    value = np.where(exponent == 0, mantissa * 0.5, (1.0 + mantissa / 2.0) * np.exp2(exponent - 1))
    return sign * value


def _bf16_value(two_bytes: np.ndarray) -> np.ndarray:
    """Little-endian BF16 pairs [..., 2k] to float64 [..., k]: the high half of an FP32."""
    halves = two_bytes.reshape(*two_bytes.shape[:-1], -1, 2).astype(np.uint32)
    bits = (halves[..., 0] | (halves[..., 1] << 8)) << 16
    with np.errstate(invalid="ignore"):  # stale slots may hold signalling NaNs
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def dense_kv8(pages: torch.Tensor) -> np.ndarray:
    """Every slot of a KV8 cache as FP64 [P*64, 576] keys, straight from the byte layout."""
    raw = pages.numpy().view(np.uint8)
    payload = raw[:, : 64 * 640].reshape(-1, 640)
    scales = raw[:, 64 * 640:].reshape(-1, 16).copy().view("<f4").astype(np.float64)
    latent = _fp8_e4m3_value(payload[:, :512]) * np.repeat(scales, 128, axis=1)
    return np.concatenate([latent, _bf16_value(payload[:, 512:])], axis=1)


def dense_kv4(pages: torch.Tensor) -> np.ndarray:
    """Every slot of a KV4 cache as FP64 [P*64, 576] keys, straight from the byte layout."""
    raw = pages.numpy().view(np.uint8)
    payload = raw[:, : 64 * 384].reshape(-1, 384)
    scale_bytes = raw[:, 64 * 384:].reshape(-1, 16).astype(np.float64)
    packed = payload[:, :256]
    codes = np.empty((packed.shape[0], 512), dtype=np.uint8)
    codes[:, 0::2] = packed & 0xF
    codes[:, 1::2] = packed >> 4
    latent = _fp4_e2m1_value(codes) * np.repeat(2.0 ** (scale_bytes - 127.0), 32, axis=1)
    return np.concatenate([latent, _bf16_value(payload[:, 256:])], axis=1)


def dense_truth(inputs: dict) -> np.ndarray:
    """FP64 attention over the selected slots of the densely decoded caches."""
    keys8, keys4 = dense_kv8(inputs["KV8"]), dense_kv4(inputs["KV4"])
    q = inputs["Q"].to(torch.float64).numpy()
    sink = inputs["attn_sink"].to(torch.float64).numpy()
    out = np.zeros((q.shape[0], q.shape[1], 512))
    for b in range(q.shape[0]):
        count8 = np.bincount(inputs["indices8"][b][inputs["indices8"][b] >= 0].numpy(),
                             minlength=keys8.shape[0])
        count4 = np.bincount(inputs["indices4"][b][inputs["indices4"][b] >= 0].numpy(),
                             minlength=keys4.shape[0])
        keys = np.concatenate([keys8[count8 > 0], keys4[count4 > 0]])
        counts = np.concatenate([count8[count8 > 0], count4[count4 > 0]]).astype(np.float64)
        if counts.size == 0:
            continue
        logits = inputs["sm_scale"] * q[b] @ keys.T  # [H, N]
        top = np.maximum(logits.max(axis=1), sink)
        weights = counts * np.exp(logits - top[:, None])
        denom = weights.sum(axis=1) + np.exp(sink - top)
        out[b] = (weights @ keys[:, :512]) / denom[:, None]
    return out


# ------------------------------------------------------------------------------- files
def test_files_load_in_flashinfer_bench_models() -> None:
    FIDefinition.model_validate(definition())
    FISolution.model_validate(kit.solution_json(SOLUTION))
    assert list(definition()["inputs"]) == INPUT_ORDER


def test_page_byte_constants_match_the_definition() -> None:
    axes = definition()["axes"]
    assert axes["page_bytes8"]["value"] == 64 * (512 + 128 + 16) == mixed_mla.PAGE_BYTES8
    assert axes["page_bytes4"]["value"] == 64 * (256 + 128 + 16) == mixed_mla.PAGE_BYTES4


def test_task_config() -> None:
    task = kit.task_json(NAME)
    assert task["tolerance"]["atol"] == 0.005 and task["tolerance"]["rtol"] == 0.016
    assert task["tolerance"]["required_matched_ratio"] is None
    kit.assert_dev_held_out(NAME, task["dev"])
    assert task["engine_baseline"] is None
    assert task["baseline"]["solution"] == SOLUTION
    assert task["preferred"]["cpu"]["solution"] == SOLUTION


# --------------------------------------------------------------------- byte layout
def _signed(byte: int) -> int:
    """The int8 value that carries an unsigned byte's bit pattern."""
    return byte - 256 if byte > 127 else byte


def test_hand_built_page_decodes_as_documented() -> None:
    """Bytes placed at documented offsets by hand decode to hand-computed values."""
    kv8 = torch.zeros(2, 41984, dtype=torch.int8)
    page, offset = 1, 5  # slot 69
    row = 640 * offset
    kv8[page, row + 0] = 0x38  # E4M3 1.0
    kv8[page, row + 130] = _signed(0xC4)  # E4M3 -3.0 (element 130, second scale block)
    kv8[page, row + 512: row + 514] = torch.tensor([0x80, 0x3F], dtype=torch.uint8).view(torch.int8)
    scales = torch.tensor([2.0, 0.25, 1.0, 1.0], dtype=torch.float32).view(torch.int8)
    kv8[page, 40960 + 16 * offset: 40960 + 16 * offset + 16] = scales
    latent, rope = reference()["decode_kv8_slots"](kv8, torch.tensor([69]))
    assert latent[0, 0] == 2.0 and latent[0, 130] == -0.75 and latent[0, 1] == 0.0
    assert rope[0, 0] == 1.0 and rope[0, 1] == 0.0  # BF16 0x3F80 = 1.0, little-endian

    kv4 = torch.zeros(1, 25600, dtype=torch.int8)
    offset = 63  # slot 63, the last of page 0
    kv4[0, 384 * offset] = _signed(0x2F)  # elements 0 (low nibble: -6) and 1 (high: 1.0)
    kv4[0, 384 * offset + 16] = 0x60  # elements 32 (0) and 33 (4.0)
    kv4[0, 384 * offset + 256: 384 * offset + 258] = torch.tensor(
        [0x00, 0xC0], dtype=torch.uint8).view(torch.int8)  # BF16 -2.0
    kv4[0, 24576 + 16 * offset] = _signed(128)  # 2**1 for elements [0, 32)
    kv4[0, 24576 + 16 * offset + 1] = 125  # 2**-2 for elements [32, 64)
    latent, rope = reference()["decode_kv4_slots"](kv4, torch.tensor([63]))
    assert latent[0, 0] == -12.0 and latent[0, 1] == 2.0
    assert latent[0, 32] == 0.0 and latent[0, 33] == 1.0
    assert rope[0, 0] == -2.0


def test_generator_encoding_round_trips_through_the_reference_decoder() -> None:
    """Encode in the generator, decode in the reference: the quantised values come back."""
    gen = np.random.default_rng(7)
    latent = torch.from_numpy(gen.standard_normal((128, 512), dtype=np.float32) * 3)
    rope = torch.from_numpy(gen.standard_normal((128, 64), dtype=np.float32)).to(torch.bfloat16)
    slots = torch.arange(128)

    codes, scales = mixed_mla.quantize_fp8_blocks(latent)
    expected8 = (codes.float().view(128, 4, 128) * scales[..., None]).view(128, 512)
    decoded8, rope8 = reference()["decode_kv8_slots"](mixed_mla.encode_kv8_pages(latent, rope),
                                                      slots)
    assert torch.equal(decoded8, expected8) and torch.equal(rope8, rope.float())
    assert torch.allclose(decoded8, latent, rtol=2 ** -4, atol=1e-2)  # FP8 quantisation error

    decoded4, rope4 = reference()["decode_kv4_slots"](mixed_mla.encode_kv4_pages(latent, rope),
                                                      slots)
    assert torch.equal(rope4, rope.float())
    block_amax = latent.abs().view(128, 16, 32).amax(-1, keepdim=True)
    # Each value lands within half an E2M1 step of its block scale (step <= 2 * scale).
    error = (decoded4 - latent).abs().view(128, 16, 32)
    assert bool((error <= block_amax / 6 * 2 + 1e-6).all())
    assert torch.equal(decoded4, torch.from_numpy(dense_kv4(
        mixed_mla.encode_kv4_pages(latent, rope))[:, :512]).float())


def test_reference_decoders_equal_the_bitwise_decoder_on_every_written_slot() -> None:
    inputs = case_inputs("b6_stale_slots")
    stale = 48
    for pages, decode, dense in [(inputs["KV8"], "decode_kv8_slots", dense_kv8),
                                 (inputs["KV4"], "decode_kv4_slots", dense_kv4)]:
        slots = torch.arange(stale, pages.shape[0] * 64)
        latent, rope = reference()[decode](pages, slots)
        expected = torch.from_numpy(dense(pages)[stale:])
        # Equal up to the FP32 rounding of the product code * scale (exact for UE8M0).
        torch.testing.assert_close(torch.cat([latent, rope], 1).double(), expected,
                                   rtol=2 ** -23, atol=0.0)


# -------------------------------------------------------------------------- reference
@pytest.mark.parametrize("label", LABELS)
def test_reference_matches_dense_fp64_formulation(label: str) -> None:
    truth = torch.from_numpy(dense_truth(case_inputs(label)))
    out = case_reference(label)
    assert out.dtype == torch.bfloat16 and out.shape == truth.shape
    torch.testing.assert_close(out.double(), truth, rtol=2 ** -8, atol=1e-4)


def test_reference_on_a_row_without_keys_is_zero_and_sink_matters() -> None:
    inputs = dict(case_inputs("b3_empty_rows"))
    out = case_reference("b3_empty_rows")
    assert bool((out[0] == 0).all())  # row 0: every index -1
    assert bool((out[1:].abs() > 0).any(dim=-1).all())
    # A much larger sink takes the mass away; -inf removes the sink (plain softmax).
    inputs["attn_sink"] = inputs["attn_sink"] + 30.0
    assert float(reference()["run"](*[inputs[n] for n in INPUT_ORDER]).abs().max()) < 1e-3
    inputs["attn_sink"] = torch.full((64,), -math.inf)
    no_sink = reference()["run"](*[inputs[n] for n in INPUT_ORDER])
    assert bool((no_sink[0] == 0).all()) and bool(torch.isfinite(no_sink.float()).all())
    torch.testing.assert_close(no_sink.double(), torch.from_numpy(dense_truth(inputs)),
                               rtol=2 ** -8, atol=1e-4)


def test_softmax_of_samples_is_neither_uniform_nor_one_hot() -> None:
    inputs = case_inputs("b1_full")
    keys = torch.from_numpy(np.concatenate([
        dense_kv8(inputs["KV8"])[inputs["indices8"][0].long().numpy()],
        dense_kv4(inputs["KV4"])[inputs["indices4"][0].long().numpy()]]))
    logits = inputs["sm_scale"] * inputs["Q"][0].double() @ keys.T
    probs = torch.cat([logits, inputs["attn_sink"].double()[:, None]], 1).softmax(1)
    top = probs[:, :-1].max(dim=1).values
    assert 0.01 < float(top.median()) < 0.6
    assert 0.001 < float(probs[:, -1].median()) < 0.9


def test_reference_does_not_mutate_inputs() -> None:
    kit.assert_reference_keeps_inputs(NAME, "b2_duplicates")


# --------------------------------------------------------------------------- solution
@pytest.mark.parametrize("label", LABELS)
def test_solution_matches_reference_under_task_tolerance(label: str) -> None:
    inputs = case_inputs(label)
    before = {n: v.clone() for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    out = solution()["run"](*[inputs[n] for n in INPUT_ORDER])
    kit.assert_within_task_tolerance(NAME, out, case_reference(label))
    assert all(torch.equal(before[n], inputs[n]) for n in before)


def test_solution_handles_no_sink_and_empty_rows() -> None:
    inputs = dict(case_inputs("b3_empty_rows"))
    inputs["attn_sink"] = torch.full((64,), -math.inf)
    out = solution()["run"](*[inputs[n] for n in INPUT_ORDER])
    assert bool((out[0] == 0).all()) and bool(torch.isfinite(out.float()).all())


# -------------------------------------------------------------------------- generator
def test_generator_is_deterministic_and_matches_the_definition() -> None:
    spec = definition()
    const = {a: v["value"] for a, v in spec["axes"].items() if v["type"] == "const"}
    dtypes = {"bfloat16": torch.bfloat16, "int8": torch.int8, "int32": torch.int32,
              "float32": torch.float32}
    for case in cases():
        first = mixed_mla.generate(kit.definition(NAME), case["params"], case["seed"])
        second = mixed_mla.generate(kit.definition(NAME), case["params"], case["seed"])
        assert list(first) == INPUT_ORDER
        sizes = dict(const, B=case["params"]["B"], P8=case["params"]["P8"],
                     P4=case["params"]["P4"])
        kit.assert_inputs_as_specified(spec, first, second, sizes, dtypes)


def test_generator_index_rows_follow_the_params() -> None:
    for case in cases():
        params = case["params"]
        inputs = case_inputs(case["label"])
        stale = params.get("stale_slots", 0)
        for key, count_key, pages in [("indices8", "valid8", "P8"), ("indices4", "valid4", "P4")]:
            rows = inputs[key]
            assert (rows != -1).sum(dim=1).tolist() == params[count_key]
            used = rows[rows != -1]
            assert bool(((used >= stale) & (used < params[pages] * 64)).all())
            if params.get("duplicates", 0) == 0:
                for row in rows:
                    valid = row[row != -1]
                    assert valid.unique().numel() == valid.numel()
    dup = case_inputs("b2_duplicates")["indices8"][0]
    assert dup[dup != -1].unique().numel() < (dup != -1).sum()
