"""The Triton QSA indexer solution on every sample case, run by Triton's CPU interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the paged
gather, the FP32 scoring and the packed (score, lower-ID) sort keys are checked against
the reference on the committed sample cases (exact integer match, the task's rule).
Speed is measured only on the H200. Skipped when triton is not installed.
"""

import json
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

from hf_eval.acceptance import compare_outputs  # noqa: E402
from hf_eval.modules import compile_reference, load_entry  # noqa: E402
from hf_eval.samples.build import cases_path, generate_case  # noqa: E402
from hf_eval.schema import Definition, Solution, TaskConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"
SOLUTION = ROOT / "solutions/qsa_index/triton_paged_score_topk_qsa_index_h4.json"
pytestmark = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")
CASES = json.loads(cases_path(DEFINITION).read_text())


@pytest.fixture(scope="module")
def loaded():
    definition = Definition.model_validate_json(
        (ROOT / "definitions/qsa_index" / f"{DEFINITION}.json").read_text())
    solution = Solution.model_validate_json(SOLUTION.read_text())
    task = TaskConfig.model_validate_json((ROOT / "tasks" / f"{DEFINITION}.json").read_text())
    assert solution.definition == DEFINITION and solution.spec.language == "triton"
    return definition, compile_reference(definition), load_entry(solution), task


def _inputs(definition, case):
    values = generate_case(definition, CASES["generator"], case)
    return [values[name] for name in definition.inputs]


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["label"] for c in CASES["cases"]])
def test_sample_case_exact(loaded, case):
    definition, reference, entry, task = loaded
    args = _inputs(definition, case)
    before = [a.clone() for a in args]
    expected = reference(*args)
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (expected,), task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) for a, b in zip(args, before))


def test_tie_rule_is_enforced(loaded):
    """All-zero keys tie everywhere: only the 512 lowest IDs pass (the check can fail)."""
    definition, reference, entry, _ = loaded
    case = next(c for c in CASES["cases"] if c["label"] == "b1_all_tied_zero_keys")
    args = _inputs(definition, case)
    got = entry.run(*args)
    assert torch.equal(got, reference(*args))
    assert not torch.equal(got.flip(1), reference(*args))
