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


def sample_case_test(solutions: dict[str, str]):
    """The test that checks every sample case of ``solutions`` (definition name to
    solution name) with :func:`check_case`; bind it in the module as
    ``test_sample_case_within_tolerance``."""
    params, ids = sample_params(solutions)

    @pytest.mark.parametrize(("name", "case"), params, ids=ids)
    def test_sample_case_within_tolerance(name, case):
        check_case(*load(name, solutions[name]), case)

    return test_sample_case_within_tolerance



def single_split_test(solutions: dict[str, str]):
    """The test that forces the split kernel's one-split path on each definition's first
    sample case (:func:`check_single_split`); bind it in the module as
    ``test_single_split_path``."""
    @pytest.mark.parametrize("name", sorted(solutions))
    def test_single_split_path(name, monkeypatch):
        """Large batches run one split per row and finish in the split kernel: force that
        path on the first sample case (the merge kernel is then not launched)."""
        check_single_split(name, solutions[name], kit.cases(name)[0], monkeypatch)

    return test_single_split_path


def check_single_split(definition_name: str, solution_name: str, case: dict,
                       monkeypatch) -> None:
    """Large batches run one split per row and finish in the split kernel: the solution
    forced onto that path (``_split_size`` answering 4096, no ``_merge_kernel``) matches
    the reference on ``case`` under the task tolerance."""
    definition, reference, entry, task = load(definition_name, solution_name)
    args = inputs(definition, case)
    monkeypatch.setattr(entry.module, "_split_size", lambda rows, heads, n: 4096)
    monkeypatch.setattr(entry.module, "_merge_kernel", None)  # must not be needed
    got = entry.run(*args)
    verdicts = compare_outputs(list(definition.outputs), got, (reference(*args),),
                               task.tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]


def forced_sizes_test(solutions: dict[str, str], sizes: dict[str, tuple[int, ...]],
                      chooser: str = "_split_size"):
    """The test that runs every sample case of ``solutions`` with the module's ``chooser``
    (the function that sizes the work of a program from the batch and the GPU) forced to
    answer each of ``sizes[definition]``, so every size a GPU can pick is checked on every
    case (the CPU alone picks the one its default SM count gives)."""
    params = [(name, case, size) for name in sorted(solutions) for case in kit.cases(name)
              for size in sizes[name]]
    ids = [f"{name}-{case['label']}-{size}" for name, case, size in params]

    @pytest.mark.parametrize(("name", "case", "size"), params, ids=ids)
    def test_every_forced_size(name, case, size, monkeypatch):
        definition, reference, entry, task = load(name, solutions[name])
        monkeypatch.setattr(entry.module, chooser, lambda *_: size)
        check_case(definition, reference, entry, task, case)

    return test_every_forced_size
