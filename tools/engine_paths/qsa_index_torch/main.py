"""Engine baseline: SGLang 0.5.23's torch QSA indexer decode path, vendored (Apache-2.0).

Scores: torch_qsa_mqa_decode (sglang/srt/layers/attention/qsa/mqa.py), sum over heads of
ReLU(q . k) / sqrt(D); selection: the CPU branch of qsa_fast_topk (qsa/kernel.py),
torch.topk over each row's first `length` logits. The CUDA path (TileLang, JIT top-k) is
not vendored. Adapters: Kc_pages gains the engine's unit head axis; output sorted
ascending, -1 last. The engine's scale and torch.topk's tie order are kept on purpose.
"""

import math

import torch

TOP_K = 512


def _torch_qsa_mqa_decode(q, k_cache, page_table, context_lens, max_model_len):
    batch = q.shape[0]
    page_size = k_cache.shape[1]
    total = page_table.shape[1] * page_size
    gathered = k_cache[page_table.long().clamp_min(0).reshape(-1), :, 0].reshape(
        batch, total, q.shape[-1]
    )
    scores = torch.einsum("bhd,bnd->bnh", q.float(), gathered.float())
    scores = torch.relu(scores).sum(dim=-1) / math.sqrt(q.shape[-1])
    positions = torch.arange(total, device=q.device).unsqueeze(0)
    scores.masked_fill_(
        positions >= context_lens.to(q.device).reshape(-1, 1), -float("inf")
    )
    logits = torch.full(
        (batch, max_model_len), -float("inf"), dtype=torch.float32, device=q.device
    )
    copy_len = min(total, max_model_len)
    if copy_len:
        logits[:, :copy_len] = scores[:, :copy_len]
    return logits


def _qsa_fast_topk_cpu(logits, row_starts, row_ends, topk):
    lengths = (row_ends - row_starts).to(device=logits.device, dtype=torch.int32)
    starts = row_starts.to(device=logits.device, dtype=torch.int32)
    output = torch.full((logits.shape[0], topk), -1, dtype=torch.int32, device=logits.device)
    for row in range(logits.shape[0]):
        start = int(starts[row])
        length = int(lengths[row])
        width = min(length, topk)
        if width:
            output[row, :width] = torch.topk(
                logits[row, start : start + length], width
            ).indices.to(torch.int32)
    return output


def run(Q_idx, Kc_pages, page_table, num_complete_blocks):
    k_cache = Kc_pages.unsqueeze(2)  # the engine's [P, page, 1, D] cache view
    max_model_len = page_table.shape[1] * Kc_pages.shape[1]
    logits = _torch_qsa_mqa_decode(Q_idx, k_cache, page_table, num_complete_blocks,
                                   max_model_len)
    starts = torch.zeros_like(num_complete_blocks)
    blocks = _qsa_fast_topk_cpu(logits, starts, num_complete_blocks, TOP_K)
    # Adapter to the definition: ascending block IDs, -1 padding last.
    key = torch.where(blocks < 0, torch.iinfo(torch.int32).max, blocks)
    ordered = key.sort(dim=-1).values
    return torch.where(ordered == torch.iinfo(torch.int32).max, -1, ordered).to(torch.int32)
