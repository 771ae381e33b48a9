"""The FlashMLA mixed-MLA solution's repack kernel, in Triton's interpreter on the CPU.

FlashMLA itself runs only on a GPU; what this solution adds to it is the repack of the
named slots into FlashMLA's V3.2 cache (656 bytes a token: 512 FP8 E4M3 codes, 4 FP32
scales of 128 values, 64 BF16 rope values). Checked here on every sample case against the
reference's own decoders: an FP8 slot's latent and rope values are the reference's
exactly, an FP4 slot's are too wherever its 32-group's scale is within 2**8 of its
128-group's largest (below, the code is the round-to-nearest-even FP8 of the value), each
row's position p is token row * topk + p (index -1 where the position is unused, and then
a token of zero bytes). The solution's output is checked on the H200.
"""

from tests.triton_kit import interpreter_only  # noqa: I001

import sys
import types

import pytest
import torch

from tests import kit

pytestmark = interpreter_only

NAME = "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512"
SOLUTION = "flashmla_sm90_repack_mixed_mla_h64"


@pytest.fixture(scope="module")
def module():
    # flash_mla is a GPU-only library: the module imports two names from it, unused here
    saved = sys.modules.get("flash_mla")
    sys.modules["flash_mla"] = types.SimpleNamespace(flash_mla_with_kvcache=None,
                                                     get_mla_metadata=None)
    try:
        yield kit.fresh_solution_module(SOLUTION)
    finally:
        if saved is None:
            sys.modules.pop("flash_mla", None)
        else:
            sys.modules["flash_mla"] = saved


def _repacked(module, kv8, kv4, idx8, idx4):
    rows, n8, n4 = idx8.shape[0], idx8.shape[1], idx4.shape[1]
    c8 = torch.full((rows * n8 * 656,), 0x55, dtype=torch.uint8)  # no zero left by chance
    c4 = torch.full((rows * n4 * 656,), 0x55, dtype=torch.uint8)
    i8 = torch.empty((rows, 1, n8), dtype=torch.int32)
    i4 = torch.empty((rows, 1, n4), dtype=torch.int32)
    tokens = module.TOKENS
    module._repack[(rows, -(-n8 // tokens) - (-n4 // tokens))](
        kv8.view(torch.int32), idx8.contiguous(), c8.view(torch.int32), i8, n8, kv4,
        kv4.view(torch.int32), idx4.contiguous(), c4.view(torch.int16), c4.view(torch.int32),
        i4, n4, TOKENS=tokens)
    return c8.view(-1, 656), c4.view(-1, 656), i8.view(-1), i4.view(-1)


def _v32(tokens: torch.Tensor):
    """(latent [N, 512], rope [N, 64]) float32 of V3.2 tokens, and their FP8 codes."""
    codes = tokens[:, :512].contiguous().view(torch.float8_e4m3fn).float()
    scales = tokens[:, 512:528].contiguous().view(torch.float32)
    latent = (codes.view(-1, 4, 128) * scales[:, :, None]).view(-1, 512)
    return latent, tokens[:, 528:].contiguous().view(torch.bfloat16).float(), codes, scales


@pytest.mark.parametrize("label", kit.labels(NAME))
def test_repack_matches_the_reference_decoders(module, label: str) -> None:
    values = kit.case_inputs(NAME, label)
    namespace = kit.reference_namespace(NAME)
    kv8, kv4 = values["KV8"], values["KV4"]
    idx8, idx4 = values["indices8"], values["indices4"]
    c8, c4, i8, i4 = _repacked(module, kv8, kv4, idx8, idx4)
    for tokens, compact, idx, pages, decode in (
            (c8, i8, idx8, kv8, namespace["decode_kv8_slots"]),
            (c4, i4, idx4, kv4, namespace["decode_kv4_slots"])):
        flat = idx.reshape(-1)
        valid = flat != -1
        want_index = torch.where(valid, torch.arange(flat.numel(), dtype=torch.int32), -1)
        assert torch.equal(compact, want_index)
        assert bool((tokens[~valid] == 0).all())
        latent, rope, codes, scales = _v32(tokens[valid])
        ref_latent, ref_rope = decode(pages, flat[valid].long())
        assert torch.equal(rope, ref_rope)
        if pages is kv8:
            assert torch.equal(latent, ref_latent)
            continue
        slots = flat[valid].long()
        ue8m0 = pages[:, 24576:].reshape(-1, 64, 16).view(torch.uint8).long()
        groups = ue8m0[slots // 64, slots % 64].view(-1, 4, 4)
        below = (groups - groups.amax(2, keepdim=True)).view(-1, 16).repeat_interleave(32, 1)
        exact = below >= -8
        assert torch.equal(latent[exact], ref_latent[exact])
        rounded = (ref_latent.view(-1, 4, 128) / scales[:, :, None]).to(torch.float8_e4m3fn)
        assert torch.equal(codes, rounded.float().view(-1, 512))
