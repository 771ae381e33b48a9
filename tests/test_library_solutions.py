"""The FlashAttention-4 and FlashInfer solutions: valid, CUDA-only, pinned, and
their adapters right on CPU.

Why: these solutions run only on an NVIDIA GPU with the pinned libraries, which CI has
neither of. What a CPU can check is checked here:
- every one loads under the schema, breaks none of ``hf_eval check``'s file rules,
  targets cuda only and pins every dependency exactly (the library's version included);
- each one's main.py, loaded with the CPU stand-ins of tests/library_fakes.py in place
  of the libraries, matches the definition's reference on every sample case under the
  task tolerance and leaves its inputs alone. That checks the adapter around the library
  call (layouts, index remaps, gates, scale and sink rules, the output order) against the
  reference semantics; the stand-ins implement the libraries' documented contracts and do
  what those leave open in the least convenient way (unordered top-k results, NaN states
  for empty GDN sequences, in-place state updates);
- the host-side plans and small adapters are checked on hand-made cases whose expected
  values are written out here (segment plans, page and row lists, dequantised bytes,
  the sink factor, the ascending-ID order, the tie rule).
With CUDA and the library importable, each solution also runs for real on its
definition's first sample workload and is compared with the reference under the task
tolerance (skipped elsewhere; results/h200/tools/library_smoke.py does the same on the H200
with timings).
"""

from __future__ import annotations

import math

import pytest
import torch
from packaging.requirements import Requirement

from hf_eval.checker import check_files
from hf_eval.data.sources import Entry, load_entry
from hf_eval.judge.acceptance import compare_outputs
from tests import kit, library_fakes
from tests.conftest import REPO

FA4_PIN = "flash-attn-4==4.0.0b36"
FLASHINFER_PIN = "flashinfer-python==0.7.2.post1"

#: solution -> (definition, the library's pinned requirement, importable module)
NEW = {
    "fa4_dense_h32_d128": ("noncausal_dense_attention_h32_d128", FA4_PIN, "flash_attn.cute"),
    "fa4_dense_h32_d64": ("noncausal_dense_attention_h32_d64", FA4_PIN, "flash_attn.cute"),
    "fa4_prefix_cached_h32_d128": ("prefix_cached_block_causal_h32_d128", FA4_PIN,
                                   "flash_attn.cute"),
    "fa4_segments_prefix0_h32_d128": ("prefix_cached_block_causal_h32_d128_prefix0", FA4_PIN,
                                      "flash_attn.cute"),
    "flashinfer_gdn_prefill_qk4_v8_d128": ("gdn_prefill_qk4_v8_d128_k_last", FLASHINFER_PIN,
                                           "flashinfer"),
    "flashinfer_gdn_decode_qk4_v8_d128": ("gdn_decode_qk4_v8_d128_k_last", FLASHINFER_PIN,
                                          "flashinfer"),
    "flashinfer_paged_decode_qsa_h24_kv2": (
        "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4", FLASHINFER_PIN, "flashinfer"),
    "flashinfer_mla_sparse_mla_h64_k128": ("sparse_mla_prefill_h64_d512_k128", FLASHINFER_PIN,
                                           "flashinfer"),
    "flashinfer_mla_sparse_mla_h64_k640": ("sparse_mla_prefill_h64_d512_k640", FLASHINFER_PIN,
                                           "flashinfer"),
    "flashinfer_mla_dequant_mixed_mla_h64": ("mixed_mla_decode_deepseek41_h64_d512_k8128_k4512",
                                             FLASHINFER_PIN, "flashinfer"),
    "flashinfer_topk_qsa_index_h4": ("qsa_index_topk_decode_qwen38_h4_d128_topk512_c4",
                                     FLASHINFER_PIN, "flashinfer"),
    "flashinfer_topk_moe_router_e384_k6": ("moe_router_gemm_topk_deepseek41_d5120_e384_topk6",
                                           FLASHINFER_PIN, "flashinfer"),
}
CASES = [(name, case["label"]) for name in NEW for case in kit.cases(NEW[name][0])]


# ----------------------------------------------------------------- files and pins
@pytest.mark.parametrize("name", NEW)
def test_solution_is_valid_cuda_only_and_pinned(name):
    definition, library_pin, _ = NEW[name]
    solution = kit.solution(name)  # the schema's validation
    assert solution.definition == definition
    assert solution.spec.target_hardware == ["cuda"]
    assert solution.spec.entry_point == "main.py::run"
    assert library_pin in solution.spec.dependencies
    for dep in solution.spec.dependencies:
        operators = [spec.operator for spec in Requirement(dep).specifier]
        assert operators == ["=="], f"{name}: {dep!r} is not pinned exactly"
    assert solution.description and library_pin.split("==")[1] in solution.description


def test_check_file_rules_hold_for_every_new_solution():
    ds = kit.dataset()
    problems = [str(p) for p in [*ds.problems, *check_files(ds)]]
    assert not [p for p in problems if any(name in p for name in NEW)], problems
    for name, (definition, _, _) in NEW.items():
        assert ds.solutions[name].value.definition == definition in ds.definitions


# ----------------------------------------------------------------- adapters on CPU
def load_with_stand_ins(name: str, monkeypatch, tmp_path) -> Entry:
    """The solution's main.py as the harness imports it, the libraries replaced by the
    stand-ins; the two GPU-only helpers that no stand-in covers are replaced too:
    the cuBLAS FP32-output GEMM (torch.mm's out_dtype has no CPU kernel) and the Triton
    scoring kernel, by plain FP32 torch computations of the same quantities."""
    library_fakes.installed(monkeypatch)
    entry = load_entry(kit.solution(name), tmp_path)
    module = entry.module
    if name == "flashinfer_topk_moe_router_e384_k6":
        monkeypatch.setattr(module, "gate_logits", lambda X, W: X.float() @ W.float().T)
    if name == "flashinfer_topk_qsa_index_h4":
        monkeypatch.setattr(module, "block_scores", _block_scores)
    return entry


def _block_scores(q, Kc_pages, page_table, lengths, width):
    """FP32 scores sum_h ReLU(q_h . k_j) of the complete blocks, -inf after them."""
    scores = torch.full((q.shape[0], width), float("-inf"))
    page = Kc_pages.shape[1]
    for b, n in enumerate(lengths.tolist()):
        blocks = torch.arange(n)
        keys = Kc_pages[page_table[b, blocks // page].long(), blocks % page].double()
        scores[b, :n] = torch.relu(keys @ q[b].double().T).sum(dim=1).float()
    return scores


@pytest.mark.parametrize(("name", "label"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_adapter_matches_the_reference_on_sample_cases(name, label, monkeypatch, tmp_path):
    definition = NEW[name][0]
    entry = load_with_stand_ins(name, monkeypatch, tmp_path)
    args, before = kit.run_entry_on_case(entry, definition, label)
    assert all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
               for a, b in zip(args, before)), "an input was modified"


def _passes(definition, label, got):
    expected = kit.case_reference(definition, label)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    verdicts = compare_outputs(list(kit.definition(definition).outputs), got, expected,
                               kit.task(definition).tolerance_for)
    return all(v.passed for v in verdicts)


@pytest.mark.parametrize("module", ["fa4_segments_prefix0_h32_d128"], indirect=True)
def test_the_comparison_catches_a_top_left_causal_alignment(module):
    """The adapter test can fail: with causal masks aligned to the start of the keys
    (top-left, not FA4's bottom-right) the per-segment composition is wrong."""
    definition = "prefix_cached_block_causal_h32_d128_prefix0"
    label = "b1_text_img_text_img_img_text"
    Q, K, V, ids = kit.args(definition, kit.case_inputs(definition, label))
    segments = module.plan_segments(ids.tolist())

    def top_left(q, k, v, causal):
        if not causal:
            return library_fakes.flash_attn_func(q, k, v, softmax_scale=128 ** -0.5)[0]
        rows = torch.arange(q.shape[1])[:, None]
        logits = torch.einsum("bihd,bjhd->bhij", q.float(), k.float()) * 128 ** -0.5
        logits = logits.masked_fill(torch.arange(k.shape[1])[None, :] > rows, float("-inf"))
        return torch.einsum("bhij,bjhd->bihd", logits.softmax(-1), v.float()).bfloat16()

    assert _passes(definition, label, module.attend_segments(Q, K, V, segments, _fa4_fake))
    assert not _passes(definition, label, module.attend_segments(Q, K, V, segments, top_left))


def _fa4_fake(q, k, v, causal):
    return library_fakes.flash_attn_func(q, k, v, softmax_scale=128 ** -0.5, causal=causal)[0]


@pytest.mark.parametrize("module", ["flashinfer_gdn_prefill_qk4_v8_d128"], indirect=True)
def test_the_comparison_catches_an_unrepaired_empty_sequence(module):
    """The stand-in leaves an empty sequence's final state NaN (the library documents
    nothing there); without the adapter's repair the case fails."""
    definition, label = "gdn_prefill_qk4_v8_d128_k_last", "empty_middle_29_0_41"
    q, k, v, state, A_log, a, dt_bias, b, cu, scale = kit.args(
        definition, kit.case_inputs(definition, label))
    g, beta = module.gates(A_log, a, dt_bias, b)
    raw = library_fakes.chunk_gated_delta_rule(
        q, k, v, g=g, beta=beta, scale=module.resolve_scale(scale, 128), initial_state=state,
        output_final_state=True, cu_seqlens=cu)
    assert not _passes(definition, label, raw)
    assert _passes(definition, label, module.run(q, k, v, state, A_log, a, dt_bias, b, cu,
                                                 scale))


def test_the_tie_rule_of_the_top_k_stand_in():
    """Without TopKTieBreak.SMALL the stand-in breaks exact ties towards the higher index,
    so a solution that forgets the tie rule fails the tie cases."""
    keys = torch.tensor([[1.0, 3.0, 3.0, 0.0]])
    assert library_fakes.top_k(keys, 1, tie_break=library_fakes.TopKTieBreak.NONE)[1].item() == 2
    assert library_fakes.top_k(keys, 1, tie_break=library_fakes.TopKTieBreak.SMALL)[1].item() == 1


# ----------------------------------------------------------------- hand-made cases
@pytest.fixture
def module(request, monkeypatch, tmp_path):
    return load_with_stand_ins(request.param, monkeypatch, tmp_path).module


@pytest.mark.parametrize("module", ["fa4_segments_prefix0_h32_d128"], indirect=True)
def test_segment_plan(module):
    seg = module.Segment
    assert module.plan_segments([-1, -1, 5, 5, 5, -1, 7, 8, 8, -1]) == [
        seg(0, 2, True), seg(2, 5, False), seg(5, 6, True), seg(6, 7, False),
        seg(7, 9, False), seg(9, 10, True)]
    assert module.plan_segments([3, 3, 3]) == [seg(0, 3, False)]
    assert module.plan_segments([-1] * 4) == [seg(0, 4, True)]
    with pytest.raises(ValueError, match="image ID 2 appears in two separate runs"):
        module.plan_segments([2, -1, 2])
    with pytest.raises(ValueError, match="IDs are -1"):
        module.plan_segments([0, -2])


@pytest.mark.parametrize("module", ["fa4_segments_prefix0_h32_d128"], indirect=True)
@pytest.mark.parametrize("layout", [[-1, -1, 5, 5, 5, -1, 7, 8, 8, -1], [4, 4, -1, 9],
                                    [-1, 0, -1, 1, 1, 1, 1, -1, -1]])
def test_segment_plan_covers_exactly_the_visible_pairs(module, layout):
    """Query i sees key j iff j <= i or both carry one image ID >= 0 (the definition's rule,
    written here), and the plan's calls see exactly these pairs: a segment [s, e) reads
    keys [0, e), causal ones aligned to the keys' end (FA4's convention)."""
    n = len(layout)
    rule = [[j <= i or (layout[i] == layout[j] >= 0) for j in range(n)] for i in range(n)]
    planned = [[False] * n for _ in range(n)]
    for s in module.plan_segments(layout):
        seqlen_q, seqlen_k = s.end - s.start, s.end
        for i in range(s.start, s.end):
            for j in range(seqlen_k):  # FA4 causal: j <= row + seqlen_k - seqlen_q
                planned[i][j] = j <= (i - s.start) + seqlen_k - seqlen_q if s.causal else True
    assert planned == rule


@pytest.mark.parametrize("module", ["flashinfer_paged_decode_qsa_h24_kv2"], indirect=True)
def test_qsa_page_plan(module):
    """Block j of a request is FlashInfer page 16 * page_table[b, j // 16] + j % 16 (four
    tokens per page); the trailing tokens are block C's page, last, of length L - 4C."""
    table = torch.tensor([[7, 2], [5, 1]], dtype=torch.int32)
    blocks = torch.tensor([[0, 15, 16, -1], [16, -1, -1, -1]], dtype=torch.int32)
    lengths = torch.tensor([70, 68], dtype=torch.int32)  # C = 17 (2 trailing), C = 17 (0)
    indptr, indices, last = module.page_plan(table, blocks, lengths, 64)
    assert indptr.tolist() == [0, 4, 5]
    assert indices.tolist() == [112, 127, 32, 33, 16]
    assert last.tolist() == [2, 4]
    assert indices.dtype == indptr.dtype == last.dtype == torch.int32
    with pytest.raises(ValueError, match="request 0 has no visible token"):
        module.page_plan(table[:1], torch.full((1, 4), -1, dtype=torch.int32),
                         torch.tensor([8], dtype=torch.int32), 64)
    with pytest.raises(ValueError, match="only 2 complete blocks"):
        module.page_plan(table[:1], torch.tensor([[2, -1, -1, -1]], dtype=torch.int32),
                         torch.tensor([9], dtype=torch.int32), 64)


@pytest.mark.parametrize("module", ["flashinfer_mla_sparse_mla_h64_k640"], indirect=True)
def test_sparse_mla_csr_plan_and_sink(module):
    indices = torch.tensor([[5, -1, 5, 9, 3], [-1, -1, 4, 4, 4]], dtype=torch.int32)
    indptr, flat, counts, empty = module.csr_plan(indices, torch.tensor([4, 2]))
    assert (indptr.tolist(), flat.tolist(), counts.tolist(), empty.tolist()) == (
        [0, 3, 4], [5, 5, 9, 0], [3, 1], [False, True])
    with pytest.raises(ValueError, match="topk_length"):
        module.csr_plan(indices, torch.tensor([6, 0]))
    out = torch.tensor([[[2.0, 2.0], [2.0, 2.0]], [[float("nan")] * 2] * 2]).bfloat16()
    lse = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
    sink = torch.tensor([0.0, float("-inf")])
    got = module.apply_sink(out, lse, sink, torch.tensor([False, True]))
    # e^0 / (e^0 + e^0) = 1/2 with a sink of 0; a -inf sink leaves O alone; empty: 0
    assert got.tolist() == [[[1.0, 1.0], [2.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]]


@pytest.mark.parametrize("module", ["flashinfer_mla_dequant_mixed_mla_h64"], indirect=True)
def test_mixed_mla_row_plan(module):
    i8 = torch.tensor([[3, -1, 70], [-1, -1, -1]], dtype=torch.int32)
    i4 = torch.tensor([[10, -1], [-1, -1]], dtype=torch.int32)
    slots8, slots4, indptr, flat, counts, empty = module.row_plan(i8, i4, 128, 128)
    assert slots8.tolist() == [3, 70] and slots4.tolist() == [10]
    # buffer rows: KV8 rows 0-1, KV4 row 2, the zero row 3
    assert (indptr.tolist(), flat.tolist(), counts.tolist(), empty.tolist()) == (
        [0, 3, 4], [0, 1, 2, 3], [3, 1], [False, True])
    with pytest.raises(ValueError, match=r"indices4\[0\] holds slot 10 outside \[0, 8\)"):
        module.row_plan(i8, i4, 128, 8)


@pytest.mark.parametrize("module", ["flashinfer_mla_dequant_mixed_mla_h64"], indirect=True)
def test_mixed_mla_dequantisation_of_hand_written_bytes(module):
    """One slot (page 1, offset 2) of each cache, bytes written by hand."""
    kv8 = torch.zeros(2, 41984, dtype=torch.int8)
    row = 640 * 2
    kv8[1, row:row + 512] = 0x38  # E4M3 0x38 = 1.0
    kv8[1, row + 128] = 0x40  # 2.0, first value of the second group of 128
    kv8[1, row + 512:row + 640] = torch.tensor([1.5] * 64).bfloat16().view(torch.int8)
    scales = torch.tensor([2.0, 0.5, 1.0, 4.0]).view(torch.int8)
    kv8[1, 40960 + 16 * 2:40960 + 16 * 3] = scales
    got = module.dequant_kv8(kv8, torch.tensor([1]), torch.tensor([2])).float()
    expected = [2.0] * 128 + [1.0] + [0.5] * 127 + [1.0] * 128 + [4.0] * 128 + [1.5] * 64
    assert got[0].tolist() == expected

    kv4 = torch.zeros(2, 25600, dtype=torch.int8)
    row = 384 * 2
    kv4[1, row:row + 256] = 0x21  # low nibble 1 (0.5), high nibble 2 (1.0)
    kv4[1, row] = torch.tensor(0xF9).to(torch.uint8).view(torch.int8)  # -0.5, then -6
    kv4[1, row + 256:row + 384] = torch.tensor([-2.0] * 64).bfloat16().view(torch.int8)
    kv4[1, 24576 + 16 * 2:24576 + 16 * 3] = 127  # 2**0
    kv4[1, 24576 + 16 * 2] = torch.tensor(128).to(torch.uint8).view(torch.int8)  # 2**1
    table = module.fp4_pair_table("cpu")
    got = module.dequant_kv4(kv4, torch.tensor([1]), torch.tensor([2]), table).float()
    first = [-1.0, -12.0] + [1.0, 2.0] * 15  # the first 32 values, scale 2
    assert got[0].tolist() == first + [0.5, 1.0] * 240 + [-2.0] * 64


@pytest.mark.parametrize("module", ["flashinfer_topk_qsa_index_h4"], indirect=True)
def test_qsa_index_ascending_ids(module):
    selected = torch.tensor([[5, -1, 2, 9], [-1, -1, -1, -1], [3, 1, 2, 0]], dtype=torch.int32)
    assert module.ascending_ids(selected).tolist() == [
        [2, 5, 9, -1], [-1, -1, -1, -1], [0, 1, 2, 3]]


@pytest.mark.parametrize("module", ["flashinfer_gdn_prefill_qk4_v8_d128"], indirect=True)
def test_gdn_gates_and_scale(module):
    """A_log = 0 and a + dt_bias = 0: g = exp(-softplus(0)) = exp(-ln 2) = 1/2; b = 0:
    beta = 1/2; a large a + dt_bias: softplus(x) = x (threshold 20), g = exp(-e * 30)."""
    a = torch.tensor([[0.0, 30.0]]).bfloat16()
    g, beta = module.gates(torch.tensor([0.0, 1.0]), a, torch.zeros(2),
                           torch.zeros(1, 2).bfloat16())
    assert g.dtype == beta.dtype == torch.float32 and g.is_contiguous()
    assert torch.allclose(g, torch.tensor([[0.5, math.exp(-math.e * 30.0)]]), rtol=1e-6)
    assert beta.tolist() == [[0.5, 0.5]]
    assert module.resolve_scale(0.0, 128) == 1.0 / math.sqrt(128)  # the reference's value
    assert module.resolve_scale(0.25, 128) == 0.25


@pytest.mark.parametrize("module", ["flashinfer_topk_moe_router_e384_k6"], indirect=True)
def test_router_tie_rule_and_weights(module):
    """Exact ties at the 6th place go to the lower expert ID; weights are the selected
    scores (without the bias) normalised to routed_scale; IDs come out ascending."""
    logits = torch.zeros(1, 10)  # every score sqrt(softplus(0)) = sqrt(ln 2)
    bias = torch.tensor([0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    ids, weights = module.route(logits, bias, bias, torch.tensor([False]), 2.5,
                                module._flashinfer_select)
    assert ids.tolist() == [[0, 1, 2, 3, 4, 5]] and ids.dtype == torch.int64
    assert torch.allclose(weights, torch.full((1, 6), 2.5 / 6))
    image_bias = torch.zeros(10)
    image_bias[9] = 1.0
    ids, _ = module.route(logits, bias, image_bias, torch.tensor([True]), 1.0,
                          module._flashinfer_select)
    assert ids.tolist() == [[0, 1, 2, 3, 4, 9]]


# ----------------------------------------------------------------- on a GPU
@pytest.mark.parametrize("name", NEW)
def test_first_sample_workload_on_gpu(name):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA (the library solutions are GPU-only)")
    definition_name, _, library = NEW[name]
    pytest.importorskip(library)
    if name == "flashinfer_topk_qsa_index_h4":
        pytest.importorskip("triton")
    from hf_eval.dataset import open_dataset

    ds = open_dataset(REPO)  # default resolvers: large sample tensors are regenerated
    definition = ds.definition(definition_name)
    args = ds.materialise_inputs(definition, ds.workloads[definition_name][0], device="cuda")
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    expected = kit.reference(definition_name)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    entry = load_entry(ds.solution(name))
    got = entry.prepare(*args)() if entry.prepare else entry.run(*args)
    torch.cuda.synchronize()
    verdicts = compare_outputs(list(definition.outputs), got, expected,
                               ds.task(definition_name).tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
               for a, b in zip(args, before)), "an input was modified"
