"""CPU stand-ins for the FlashAttention-4 and FlashInfer calls of the library solutions.

Why: CI has no GPU and neither library runs on a CPU, but each library solution is plain
torch (layouts, index remaps, gates, scale rules, a sink correction, output order) around
one library call. These stand-ins implement each call's contract as the pinned wheels
document it (flash-attn-4 4.0.0b36 ``flash_attn/cute/interface.py`` and ``mask.py``;
flashinfer-python 0.7.2.post1 ``gdn_prefill.py``, ``gdn_decode.py``, ``decode.py``,
``mla/_batch_mla``, ``topk.py``) in plain FP32 torch, refuse arguments the contract
refuses (dtypes, shapes, integer metadata, unknown keywords), and do what the contract
leaves open in the least convenient way: top-k results come back unordered, an empty
GDN sequence's final state is NaN, the GDN decode state is updated in place, an MLA
request may not be empty. A solution's ``main.py`` loaded with these modules in
``sys.modules`` can then be compared with the definition's reference on CPU. They say
nothing about the libraries' own numerics: the GPU tests and
``results/h200/tools/library_smoke.py`` run the real ones.
"""

from __future__ import annotations

import enum
import math
import sys
import types
from dataclasses import dataclass

import torch
import torch.nn.functional as F

HALF = (torch.float16, torch.bfloat16)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(f"library stand-in: {message}")


# ------------------------------------------------------------------- FlashAttention-4
def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None,
                    causal=False, window_size=(None, None), learnable_sink=None,
                    softcap=0.0, num_splits=1, pack_gqa=None, deterministic=False,
                    return_lse=False):
    """``flash_attn.cute.flash_attn_func``: [B, S, H, D] q/k/v, (out, lse).

    Causal masks align the end of the queries with the end of the keys (FA4's mask.py:
    key j is visible to query i iff j <= i + seqlen_k - seqlen_q)."""
    _require(qv is None and gather_kv_indices is None and learnable_sink is None
             and softcap == 0.0 and window_size == (None, None), "only plain attention")
    for name, t in (("q", q), ("k", k), ("v", v)):
        _require(t.dim() == 4 and t.dtype in HALF, f"{name} must be [B, S, H, D] fp16/bf16")
        _require(t.stride(-1) == 1, f"{name}'s last dimension must be contiguous")
    batch, seqlen_q, heads, dim = q.shape
    seqlen_k = k.shape[1]
    _require(k.shape == (batch, seqlen_k, heads, dim) == v.shape, "k/v shape")
    scale = dim ** -0.5 if softmax_scale is None else softmax_scale
    logits = torch.einsum("bihd,bjhd->bhij", q.float(), k.float()) * scale
    if causal:
        rows = torch.arange(seqlen_q)[:, None]
        cols = torch.arange(seqlen_k)[None, :]
        logits = logits.masked_fill(cols > rows + seqlen_k - seqlen_q, float("-inf"))
    lse = torch.logsumexp(logits, dim=-1)  # [B, H, Sq]
    out = torch.einsum("bhij,bjhd->bihd", torch.softmax(logits, dim=-1), v.float())
    return out.to(q.dtype).contiguous(), lse


# ------------------------------------------------------------------- FlashInfer GDN
def _delta_rule_token(s, q_t, k_t, v_t, g, beta, scale):
    """One token of every head: S' = g S; v_new = beta v + (1 - beta) k^T S';
    S = S' + k (v_new - k^T S')^T; out = scale q^T S. ``s`` is [H, K, V]."""
    s = g[:, None, None] * s
    v_old = torch.einsum("hk,hkv->hv", k_t, s)
    v_new = beta[:, None] * v_t + (1.0 - beta[:, None]) * v_old
    s = s + torch.einsum("hk,hv->hkv", k_t, v_new - v_old)
    return s, scale * torch.einsum("hk,hkv->hv", q_t, s)


def chunk_gated_delta_rule(q, k, v, g=None, beta=None, scale=None, initial_state=None,
                           output_final_state=False, cu_seqlens=None,
                           use_qk_l2norm_in_kernel=False, output=None, output_state=None,
                           use_cp="auto", backend="auto", max_seqlen=None):
    """``flashinfer.gdn_prefill.chunk_gated_delta_rule``: precomputed FP32 gates [T, HV],
    state [N, HV, V, K], value head h reads q/k head h * H // HV."""
    _require(cu_seqlens is not None and not cu_seqlens.dtype.is_floating_point,
             "cu_seqlens is required and integer")
    total, heads, dim = q.shape
    value_heads = v.shape[1]
    for name, t in (("q", q), ("k", k), ("v", v)):
        _require(t.dtype in HALF and t.is_contiguous(), f"{name} must be contiguous fp16/bf16")
    for name, t in (("g", g), ("beta", beta)):
        _require(t is None or (t.dtype == torch.float32 and t.is_contiguous()
                               and t.shape == (total, value_heads)),
                 f"{name} must be contiguous float32 [T, HV]")
    bounds = [int(x) for x in cu_seqlens.tolist()]
    seqs = len(bounds) - 1
    _require(seqs >= 1 and bounds[0] == 0 and bounds[-1] == total, "cu_seqlens bounds")
    bound = total if max_seqlen is None else max_seqlen
    _require(type(bound) is int and -(-total // seqs) <= bound <= total
             and (bound > 0 or total == 0), "max_seqlen outside [ceil(T / N), T]")
    _require(initial_state is None or (initial_state.dtype == torch.float32 and
             initial_state.shape == (seqs, value_heads, dim, dim)), "initial_state shape")
    scale = dim ** -0.5 if scale is None or scale == 0.0 else scale
    qf, kf = q.float(), k.float()
    if use_qk_l2norm_in_kernel:
        qf, kf = F.normalize(qf, dim=-1, eps=1e-6), F.normalize(kf, dim=-1, eps=1e-6)
    group = value_heads // heads
    qf, kf, vf = qf.repeat_interleave(group, 1), kf.repeat_interleave(group, 1), v.float()
    gf = torch.ones(total, value_heads) if g is None else g
    bf = torch.ones(total, value_heads) if beta is None else beta
    out = torch.zeros(total, value_heads, dim)
    final = torch.empty(seqs, value_heads, dim, dim)
    for n in range(seqs):
        if bounds[n] == bounds[n + 1]:
            final[n] = float("nan")  # not documented: a solution must not rely on it
            continue
        s = (torch.zeros(value_heads, dim, dim) if initial_state is None
             else initial_state[n].transpose(-1, -2).clone())
        for t in range(bounds[n], bounds[n + 1]):
            s, out[t] = _delta_rule_token(s, qf[t], kf[t], vf[t], gf[t], bf[t], scale)
        final[n] = s.transpose(-1, -2)
    out = out.to(q.dtype)
    return (out, final) if output_final_state else out


def gated_delta_rule_decode_pretranspose(q, k, v, state, A_log, a, dt_bias, b, scale=None,
                                         output=None, use_qk_l2norm=True, initial_state=None,
                                         initial_state_indices=None, backend="auto"):
    """``flashinfer.gdn_decode.gated_delta_rule_decode_pretranspose``: one token, gates from
    the raw inputs in the kernel, FP32 state [B, HV, V, K] updated IN PLACE."""
    _require(initial_state is None and initial_state_indices is None, "direct state only")
    batch, steps, heads, dim = q.shape
    value_heads = v.shape[2]
    _require(steps == 1, "decode takes one token per request")
    _require(state.dtype == torch.float32 and state.shape == (batch, value_heads, dim, dim),
             "state must be float32 [B, HV, V, K]")
    _require(q.dtype in HALF and k.dtype in HALF and v.dtype in HALF, "q/k/v fp16/bf16")
    _require(a.dtype in HALF and b.dtype in HALF, "a/b fp16/bf16")
    _require(A_log.dtype == torch.float32, "A_log float32")
    _require(dt_bias.dtype in (torch.float32, torch.bfloat16), "dt_bias float32/bf16")
    scale = dim ** -0.5 if scale is None else scale
    qf, kf = q[:, 0].float(), k[:, 0].float()
    if use_qk_l2norm:
        qf, kf = F.normalize(qf, dim=-1, eps=1e-6), F.normalize(kf, dim=-1, eps=1e-6)
    group = value_heads // heads
    qf, kf = qf.repeat_interleave(group, 1), kf.repeat_interleave(group, 1)
    g = torch.exp(-torch.exp(A_log.float()) * F.softplus(a[:, 0].float() + dt_bias.float()))
    beta = torch.sigmoid(b[:, 0].float())
    out = torch.empty(batch, 1, value_heads, dim)
    for n in range(batch):
        s, out[n, 0] = _delta_rule_token(state[n].transpose(-1, -2), qf[n], kf[n],
                                         v[n, 0].float(), g[n], beta[n], scale)
        state[n] = s.transpose(-1, -2)  # in place, as the kernel does
    return out.to(torch.bfloat16), state


# ------------------------------------------------------------------- FlashInfer paged decode
class BatchDecodeWithPagedKVCacheWrapper:
    """``flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper`` (NHD pages)."""

    def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False,
                 use_tensor_cores=False, backend="auto"):
        _require(kv_layout == "NHD", "only the NHD layout is emulated")
        self.plan_args = None

    def plan(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim,
             page_size, *, pos_encoding_mode="NONE", window_left=-1, logits_soft_cap=None,
             q_data_type="float16", kv_data_type=None, sm_scale=None):
        for name, t in (("indptr", indptr), ("indices", indices),
                        ("last_page_len", last_page_len)):
            _require(t.dtype == torch.int32 and t.dim() == 1, f"{name} must be int32 1-D")
        lasts = last_page_len.tolist()
        _require(all(1 <= x <= page_size for x in lasts), "1 <= last_page_len <= page_size")
        _require(pos_encoding_mode == "NONE" and window_left == -1, "plain attention only")
        self.plan_args = (indptr.tolist(), indices.tolist(), lasts, num_qo_heads,
                          num_kv_heads, head_dim, page_size,
                          head_dim ** -0.5 if sm_scale is None else sm_scale)

    def run(self, q, paged_kv_cache, return_lse=False):
        _require(self.plan_args is not None, "run() before plan()")
        indptr, indices, lasts, qo_heads, kv_heads, dim, page_size, scale = self.plan_args
        k_cache, v_cache = paged_kv_cache
        _require(k_cache.shape[1:] == (page_size, kv_heads, dim) == v_cache.shape[1:],
                 "k/v cache must be [pages, page_size, kv_heads, head_dim]")
        _require(q.shape == (len(lasts), qo_heads, dim), "q must be [B, qo_heads, head_dim]")
        out = torch.empty(q.shape)
        group = qo_heads // kv_heads
        for b in range(len(lasts)):
            pages = indices[indptr[b]:indptr[b + 1]]
            keys = torch.cat([k_cache[p] for p in pages])  # [n * page_size, kv_heads, D]
            vals = torch.cat([v_cache[p] for p in pages])
            length = (len(pages) - 1) * page_size + lasts[b]
            keys, vals = keys[:length].float(), vals[:length].float()
            qf = q[b].float().view(kv_heads, group, dim)
            probs = torch.softmax(torch.einsum("kgd,tkd->kgt", qf, keys) * scale, dim=-1)
            out[b] = torch.einsum("kgt,tkd->kgd", probs, vals).reshape(qo_heads, dim)
        return out.to(q.dtype)


# ------------------------------------------------------------------- FlashInfer MLA
@dataclass
class MLAPlanMetadata:
    """``flashinfer.mla.MLAPlanMetadata`` (the CSR form)."""

    qo_indptr: torch.Tensor
    kv_indptr: torch.Tensor
    kv_indices: torch.Tensor
    kv_len_arr: torch.Tensor

    @classmethod
    def csr(cls, qo_indptr, kv_indptr, kv_indices, kv_len_arr):
        return cls(qo_indptr, kv_indptr, kv_indices, kv_len_arr)


class BatchMLAPagedAttentionWrapper:
    """``flashinfer.mla.BatchMLAPagedAttentionWrapper``: absorbed MLA, packed query
    [T, H, ckv + kpe] and packed KV pages [pages, page_size, ckv + kpe]; an empty request
    is refused (the FA backends' behaviour there is not documented)."""

    def __init__(self, float_workspace_buffer, use_cuda_graph=False, backend="auto"):
        self.plan_args = None

    def plan(self, *, metadata, num_heads, head_dim_ckv, head_dim_kpe, page_size, causal,
             sm_scale, q_data_type, kv_data_type, lse_mode="none"):
        for name in ("qo_indptr", "kv_indptr", "kv_indices", "kv_len_arr"):
            _require(getattr(metadata, name).dtype == torch.int32, f"{name} must be int32")
        _require(q_data_type in HALF and kv_data_type == q_data_type, "fp16/bf16 q and kv")
        _require(lse_mode in ("none", "base2", "basee"), "lse_mode")
        _require(not causal, "only the non-causal plan is emulated")
        qo = metadata.qo_indptr.tolist()
        _require(all(e - s == 1 for s, e in zip(qo, qo[1:])), "one query per request")
        kv_indptr, kv_len = metadata.kv_indptr.tolist(), metadata.kv_len_arr.tolist()
        _require(all(n > 0 for n in kv_len), "an empty request")
        _require(all(-(-n // page_size) == e - s
                     for n, s, e in zip(kv_len, kv_indptr, kv_indptr[1:])),
                 "kv_len does not match the page counts")
        self.plan_args = (kv_indptr, metadata.kv_indices.tolist(), kv_len, num_heads,
                          head_dim_ckv, head_dim_kpe, page_size, sm_scale, lse_mode)

    def run(self, *, query, kv_cache, return_lse=False, return_lse_base_on_e=False):
        _require(self.plan_args is not None, "run() before plan()")
        kv_indptr, kv_indices, kv_len, heads, ckv, kpe, page_size, scale, lse_mode = \
            self.plan_args
        wanted = "basee" if return_lse_base_on_e else "base2" if return_lse else "none"
        _require(wanted == lse_mode, f"run's LSE mode {wanted} != planned {lse_mode}")
        _require(query.dim() == 3 and query.shape[1:] == (heads, ckv + kpe), "packed query")
        _require(kv_cache.dim() == 3 and kv_cache.shape[1:] == (page_size, ckv + kpe),
                 "packed kv_cache [pages, page_size, ckv + kpe]")
        out = torch.empty(query.shape[0], heads, ckv)
        lse = torch.empty(query.shape[0], heads)
        for r in range(query.shape[0]):
            pages = kv_indices[kv_indptr[r]:kv_indptr[r + 1]]
            keys = torch.cat([kv_cache[p] for p in pages])[:kv_len[r]].float()
            logits = query[r].float() @ keys.T * scale  # [H, N]
            lse[r] = torch.logsumexp(logits, dim=1)
            out[r] = torch.softmax(logits, dim=1) @ keys[:, :ckv]
        if lse_mode == "base2":
            lse = lse / math.log(2.0)
        out = out.to(query.dtype)
        return (out, lse) if return_lse or return_lse_base_on_e else out


# ------------------------------------------------------------------- FlashInfer top-k
class TopKTieBreak(enum.IntEnum):
    """``flashinfer.topk.TopKTieBreak``."""

    NONE = 0
    SMALL = 1
    LARGE = 2


def _top_indices(values: torch.Tensor, k: int, tie_break: int) -> torch.Tensor:
    """Indices of the k largest values of a 1-D tensor; ties at the boundary go to the
    smaller index (SMALL) or, for LARGE and NONE, to the larger one (NONE leaves it open:
    the inconvenient choice for a caller that needs the lower-ID rule)."""
    n = values.numel()
    ids = torch.arange(n) if tie_break == TopKTieBreak.SMALL else torch.arange(n - 1, -1, -1)
    order = torch.sort(-values[ids].double(), stable=True).indices
    return ids[order[:k]]


def top_k(input, k, sorted=False, deterministic=False, tie_break=TopKTieBreak.NONE,
          dsa_graph_safe=False):
    """``flashinfer.topk.top_k``: (values, int64 indices); unordered unless ``sorted``
    (here: ascending by value, the opposite of a sorted result)."""
    _require(input.dim() == 2 and input.dtype in (torch.float32, *HALF), "[rows, d] float")
    rows = [_top_indices(row, k, tie_break) for row in input]
    indices = torch.stack(rows).to(torch.int64)
    if not sorted:
        indices = indices.flip(1)
    return torch.gather(input, 1, indices), indices


def top_k_ragged_transform(input, offsets, lengths, k, deterministic=False,
                           tie_break=TopKTieBreak.NONE, dsa_graph_safe=False, row_starts=None):
    """``flashinfer.topk.top_k_ragged_transform``: per row the top k of its first
    lengths[i] values (all of them when lengths[i] <= k) plus offsets[i], int32, -1
    padded; here in descending index order, then the padding."""
    _require(input.dim() == 2 and input.stride(-1) == 1, "[rows, max_len], last dim contiguous")
    _require(offsets.dtype == torch.int32 and lengths.dtype == torch.int32, "int32 metadata")
    _require(row_starts is None, "row_starts is not emulated")
    out = torch.full((input.shape[0], k), -1, dtype=torch.int32)
    for i, (row, n, offset) in enumerate(zip(input, lengths.tolist(), offsets.tolist())):
        _require(0 <= n <= input.shape[1], f"lengths[{i}] = {n} outside the row")
        chosen = torch.arange(n) if n <= k else _top_indices(row[:n], k, tie_break)
        chosen = torch.sort(chosen, descending=True).values
        out[i, :chosen.numel()] = chosen.to(torch.int32) + offset
    return out


# ------------------------------------------------------------------- installing them
def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    module.__file__ = f"<library stand-in {name}>"
    return module


def library_modules() -> dict[str, types.ModuleType]:
    """The stand-in modules by import name (install them with monkeypatch.setitem)."""
    cute = _module("flash_attn.cute", flash_attn_func=flash_attn_func)
    modules = {
        "flash_attn": _module("flash_attn", cute=cute),
        "flash_attn.cute": cute,
        "flashinfer.gdn_prefill": _module("flashinfer.gdn_prefill",
                                          chunk_gated_delta_rule=chunk_gated_delta_rule),
        "flashinfer.gdn_decode": _module(
            "flashinfer.gdn_decode",
            gated_delta_rule_decode_pretranspose=gated_delta_rule_decode_pretranspose),
        "flashinfer.decode": _module(
            "flashinfer.decode",
            BatchDecodeWithPagedKVCacheWrapper=BatchDecodeWithPagedKVCacheWrapper),
        "flashinfer.mla": _module("flashinfer.mla", MLAPlanMetadata=MLAPlanMetadata,
                                  BatchMLAPagedAttentionWrapper=BatchMLAPagedAttentionWrapper),
        "flashinfer.topk": _module("flashinfer.topk", TopKTieBreak=TopKTieBreak, top_k=top_k,
                                   top_k_ragged_transform=top_k_ragged_transform),
    }
    modules["flashinfer"] = _module("flashinfer", **{
        name.split(".")[1]: mod for name, mod in modules.items()
        if name.startswith("flashinfer.")})
    return modules


def triton_modules() -> dict[str, types.ModuleType]:
    """Just enough of ``triton`` to import a module that defines (never runs) a kernel."""
    language = _module("triton.language", constexpr=object)
    return {"triton": _module("triton", jit=lambda fn: fn, language=language,
                              cdiv=lambda a, b: -(-a // b)),
            "triton.language": language}


def installed(monkeypatch, with_triton: bool | None = None) -> None:
    """Put the stand-ins into sys.modules for one test (triton's only when it is absent)."""
    modules = library_modules()
    if with_triton or (with_triton is None and "triton" not in sys.modules
                       and _absent("triton")):
        modules.update(triton_modules())
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)


def _absent(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None
