"""The Triton QSA sparse GQA decode solution on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the virtual
token list (selected blocks, then trailing tokens), the paged gather, the split softmax
and its merge are checked against the reference on the committed sample cases under the
task's tolerance.
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
DEFINITION = "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4"
SOLUTION = ROOT / "solutions/qsa_attention/triton_split_kv_sparse_gqa_decode_h24_kv2.json"
pytestmark = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")
CASES = json.loads(cases_path(DEFINITION).read_text())


@pytest.fixture(scope="module")
def loaded():
    definition = Definition.model_validate_json(
        (ROOT / "definitions/qsa_attention" / f"{DEFINITION}.json").read_text())
    solution = Solution.model_validate_json(SOLUTION.read_text())
    task = TaskConfig.model_validate_json((ROOT / "tasks" / f"{DEFINITION}.json").read_text())
    assert solution.definition == DEFINITION and solution.spec.language == "triton"
    return definition, compile_reference(definition), load_entry(solution), task


def _inputs(definition, case):
    values = generate_case(definition, CASES["generator"], case)
    return [values[name] for name in definition.inputs]


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["label"] for c in CASES["cases"]])
def test_sample_case_within_tolerance(loaded, case):
    definition, reference, entry, task = loaded
    args = _inputs(definition, case)
    before = [a.clone() for a in args]
    expected = reference(*args)
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (expected,), task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) for a, b in zip(args, before))
