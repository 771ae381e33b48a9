"""Value rules of the mixed-cache MLA decode family that shapes and dtypes cannot express.

Only slots referenced by a valid index are checked for well-formed bytes: like a real page
pool, a cache may hold stale or unwritten slots (any bytes), and the contract says they
must not influence the output.
"""

from __future__ import annotations

import torch

from hf_eval.rules.common import sink_and_scale, violation

PAGE_SIZE = 64
LATENT_DIM = 512
KV8_PAYLOAD_BYTES = 640
KV8_SCALE_BYTES = 16
KV4_PAYLOAD_BYTES = 384
KV4_SCALE_BYTES = 16


def _slot_rows(pages: torch.Tensor, slots: torch.Tensor, row_bytes: int,
               region_start: int) -> torch.Tensor:
    """The ``row_bytes`` bytes of each slot in the region starting at ``region_start``."""
    columns = (region_start + (slots % PAGE_SIZE)[:, None] * row_bytes
               + torch.arange(row_bytes, device=pages.device)[None, :])
    return pages[(slots // PAGE_SIZE)[:, None], columns]


def _index_problems(name: str, indices: torch.Tensor, pages: int) -> tuple[list[str], torch.Tensor]:
    """Range problems of one index tensor and the distinct slots it validly references."""
    limit = pages * PAGE_SIZE
    flat = indices.to(torch.int64)
    bad = (flat != -1) & ((flat < 0) | (flat >= limit))
    problems = violation(name, f"every entry must be -1 (unused) or a slot page * 64 + offset "
                         f"in [0, {limit}) for {pages} pages", bad, flat, "entries are not")
    used = flat[(flat >= 0) & (flat < limit)]
    return problems, torch.unique(used)


def check(definition: str, inputs: dict[str, torch.Tensor | int | float | bool]) -> list[str]:
    """One message per violated value rule of a mixed MLA workload; empty when valid."""
    kv8, kv4 = inputs["KV8"], inputs["KV4"]
    problems8, slots8 = _index_problems("indices8", inputs["indices8"], kv8.shape[0])
    problems4, slots4 = _index_problems("indices4", inputs["indices4"], kv4.shape[0])
    problems = problems8 + problems4

    scales8 = _slot_rows(kv8, slots8, KV8_SCALE_BYTES, PAGE_SIZE * KV8_PAYLOAD_BYTES)
    scales8 = scales8.contiguous().view(torch.float32)  # [N, 4]
    bad = ~(torch.isfinite(scales8) & (scales8 > 0)).all(dim=1)
    if bool(bad.any()):
        problems.append(
            f"KV8: the 4 FP32 scales of every referenced slot must be finite and positive; "
            f"{int(bad.sum())} slots are not, first slot {int(slots8[bad][0])}")
    payload8 = _slot_rows(kv8, slots8, KV8_PAYLOAD_BYTES, 0)
    codes = payload8[:, :LATENT_DIM]
    bad = ((codes == 0x7F) | (codes == -1)).any(dim=1)  # E4M3FN NaN: 0x7F and 0xFF
    if bool(bad.any()):
        problems.append(
            f"KV8: the FP8 E4M3 latent of every referenced slot must hold no NaN code "
            f"(0x7F, 0xFF); {int(bad.sum())} slots do, first slot {int(slots8[bad][0])}")
    rope8 = payload8[:, LATENT_DIM:].contiguous().view(torch.bfloat16)
    bad = ~torch.isfinite(rope8).all(dim=1)
    if bool(bad.any()):
        problems.append(f"KV8: the BF16 rope of every referenced slot must be finite; "
                        f"{int(bad.sum())} slots are not, first slot {int(slots8[bad][0])}")

    scales4 = _slot_rows(kv4, slots4, KV4_SCALE_BYTES, PAGE_SIZE * KV4_PAYLOAD_BYTES)
    bad = (scales4 == -1).any(dim=1)  # UE8M0 byte 255 is not a number
    if bool(bad.any()):
        problems.append(
            f"KV4: the 16 UE8M0 scale bytes of every referenced slot must not be 255 (NaN); "
            f"{int(bad.sum())} slots have one, first slot {int(slots4[bad][0])}")
    rope4 = _slot_rows(kv4, slots4, KV4_PAYLOAD_BYTES, 0)[:, LATENT_DIM // 2:]
    bad = ~torch.isfinite(rope4.contiguous().view(torch.bfloat16)).all(dim=1)
    if bool(bad.any()):
        problems.append(f"KV4: the BF16 rope of every referenced slot must be finite; "
                        f"{int(bad.sum())} slots are not, first slot {int(slots4[bad][0])}")
    return problems + sink_and_scale(inputs)
