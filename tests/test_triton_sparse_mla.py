"""The Triton sparse MLA prefill solutions on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the gather
through indices (topk_length, -1 holes, duplicates), the split online softmax and the
merge with the sink are checked against the reference on the committed sample cases
under the task's tolerance. Speed is measured only on the H200. Skipped when triton is
not installed.
"""

from tests.triton_kit import check_case, inputs, interpreter_only, load, sample_params  # noqa: I001

import pytest

from hf_eval.judge.acceptance import compare_outputs

pytestmark = interpreter_only

SOLUTIONS = {
    "sparse_mla_prefill_h64_d512_k128": "triton_split_gather_sparse_mla_h64_k128",
    "sparse_mla_prefill_h64_d512_k640": "triton_split_gather_sparse_mla_h64_k640",
}
PARAMS, IDS = sample_params(SOLUTIONS)
PARAMS_BY_NAME = {name: [c for n, c in PARAMS if n == name] for name in SOLUTIONS}


@pytest.mark.parametrize(("name", "case"), PARAMS, ids=IDS)
def test_sample_case_within_tolerance(name, case):
    check_case(*load(name, SOLUTIONS[name]), case)


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_single_split_path(name, monkeypatch):
    """Large batches run one split per row and finish in the split kernel: force that path
    on the first sample case (the merge kernel is then not launched)."""
    definition, reference, entry, task = load(name, SOLUTIONS[name])
    case = next(iter(PARAMS_BY_NAME[name]))
    args = inputs(definition, case)
    monkeypatch.setattr(entry.module, "_split_size", lambda rows, heads, n: 4096)
    monkeypatch.setattr(entry.module, "_merge_kernel", None)  # must not be needed
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (reference(*args),),
                               task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
