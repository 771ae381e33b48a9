"""The Triton mixed MLA decode solution on every sample case, in Triton's interpreter.

Why: CI has no GPU; TRITON_INTERPRET=1 runs the same kernel source on CPU, so the page
byte layout (FP8 + FP32 scales, FP4 + UE8M0 scales, BF16 rope), unused and stale slots,
the split online softmax and the merge with the sink are checked against the reference
on the committed sample cases under the task's tolerance. Speed is measured only on the
H200. Skipped when triton is not installed.
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
OP = "mixed_mla"
SOLUTIONS = {
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512":
        "triton_fused_dequant_mixed_mla_decode_h64",
}
pytestmark = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")
PARAMS = [(name, case) for name in sorted(SOLUTIONS)
          for case in json.loads(cases_path(name).read_text())["cases"]]


def _load(name: str):
    definition = Definition.model_validate_json(
        (ROOT / "definitions" / OP / f"{name}.json").read_text())
    solution = Solution.model_validate_json(
        (ROOT / "solutions" / OP / f"{SOLUTIONS[name]}.json").read_text())
    task = TaskConfig.model_validate_json((ROOT / "tasks" / f"{name}.json").read_text())
    assert solution.definition == name and solution.spec.language == "triton"
    return definition, compile_reference(definition), load_entry(solution), task


@pytest.mark.parametrize(("name", "case"), PARAMS, ids=[f"{n}-{c['label']}" for n, c in PARAMS])
def test_sample_case_within_tolerance(name, case):
    definition, reference, entry, task = _load(name)
    generator = json.loads(cases_path(name).read_text())["generator"]
    values = generate_case(definition, generator, case)
    args = [values[n] for n in definition.inputs]
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    expected = reference(*args)
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (expected,), task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
               for a, b in zip(args, before))


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_single_split_path(name, monkeypatch):
    """Large batches run one split per row and finish in the split kernel: force that path
    on the first sample case (the merge kernel is then not launched)."""
    definition, reference, entry, task = _load(name)
    cases = json.loads(cases_path(name).read_text())
    values = generate_case(definition, cases["generator"], cases["cases"][0])
    args = [values[n] for n in definition.inputs]
    monkeypatch.setattr(entry.module, "_split_size", lambda rows, heads, n: 4096)
    monkeypatch.setattr(entry.module, "_merge_kernel", None)  # must not be needed
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (reference(*args),),
                               task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
