"""The Triton dense GEMM solutions, run by Triton's CPU interpreter on small shapes.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the tile
ordering, the masked edges (M = 1, M and N not multiples of the tile, K not a multiple of
BK) and the NT indexing are checked against the definition's reference under the task's
tolerance. The kernel reads M, N, K from the tensors, so small shapes exercise the same
code; the full-size sample cases take minutes in the interpreter and run in the H200
audit instead. Speed is measured only on the H200.
"""

from tests.triton_kit import interpreter_only, load  # noqa: I001

import pytest
import torch

from hf_eval.judge.acceptance import compare_outputs

pytestmark = interpreter_only

SOLUTIONS = {
    "dense_gemm_bf16_nt_n12288_k4096": "triton_tiled_gemm_bf16_n12288_k4096",
    "dense_gemm_bf16_nt_n4096_k12288": "triton_tiled_gemm_bf16_n4096_k12288",
    "dense_gemm_bf16_nt_n4096_k4096": "triton_tiled_gemm_bf16_n4096_k4096",
}


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
@pytest.mark.parametrize(("m", "n", "k"), [(1, 256, 128), (130, 320, 192), (300, 512, 96)])
def test_matches_reference(name, m, n, k):
    definition, reference, entry, task = load(name, SOLUTIONS[name])
    g = torch.Generator().manual_seed(m * n + k)
    a = torch.randn(m, k, generator=g).to(torch.bfloat16)
    w = (torch.randn(n, k, generator=g) / k**0.5).to(torch.bfloat16)
    before = (a.clone(), w.clone())
    got = entry.run(a, w)
    verdicts = compare_outputs(list(definition.outputs), (got,), (reference(a, w),),
                               task.tolerance_for)
    assert all(v.passed for v in verdicts), verdicts
    assert torch.equal(a, before[0]) and torch.equal(w, before[1])
    launch = entry.prepare(a, w)
    assert torch.equal(launch(), got)
