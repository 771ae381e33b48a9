"""Shared set-up of the Triton solutions' CPU tests (tests/test_triton_*.py).

CI has no GPU; ``TRITON_INTERPRET=1`` runs the same kernel source on the CPU, so every
sample case can be checked against the reference under the task's tolerance. Triton
decides between interpreter and compiler when it is first imported, so this module sets
the variable before that and must be imported before anything that imports triton; if
triton was imported earlier without it, the tests skip (run them in their own process).
Speed is measured only on the H200.
"""

from __future__ import annotations

import os
import sys

TRITON_IMPORTED_EARLIER = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1"
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

pytest.importorskip("triton")

from hf_eval.data.sources import Entry, compile_reference, load_entry  # noqa: E402
from hf_eval.judge.acceptance import compare_outputs  # noqa: E402
from tests import kit  # noqa: E402

#: Apply as ``pytestmark`` in every Triton interpreter test module.
interpreter_only = pytest.mark.skipif(
    TRITON_IMPORTED_EARLIER or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs Triton's interpreter, enabled before triton's first import: run "
           "tests/test_triton_*.py in their own pytest process")


def load(definition_name: str, solution_name: str):
    """(definition, reference run, solution entry, task) for a Triton solution."""
    definition = kit.definition(definition_name)
    solution = kit.solution(solution_name)
    assert solution.definition == definition_name and solution.spec.language == "triton"
    return definition, compile_reference(definition), load_entry(solution), \
        kit.task(definition_name)


def sample_params(solutions: dict[str, str]) -> tuple[list, list[str]]:
    """(definition, case) pairs of every sample case, and their test ids."""
    params = [(name, case) for name in sorted(solutions) for case in kit.cases(name)]
    return params, [f"{name}-{case['label']}" for name, case in params]


def inputs(definition, case: dict) -> list[object]:
    values = kit.case_inputs(definition.name, case["label"])
    return [values[name] for name in definition.inputs]


def check_case(definition, reference, entry: Entry, task, case: dict) -> None:
    """The solution matches the reference under the task tolerance and leaves inputs alone."""
    args = inputs(definition, case)
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    expected = reference(*args)
    got = entry.run(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    verdicts = compare_outputs(list(definition.outputs), got, expected, task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    assert all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
               for a, b in zip(args, before))
