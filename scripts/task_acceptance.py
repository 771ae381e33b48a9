"""``compare_output(actual, expected, tolerance)``: one output judged under a task's
tolerance, with the published module's interface, by :mod:`hf_eval.judge.acceptance`.

``tolerance`` is a task's ``tolerance`` object (``atol``, ``rtol``, optional
``required_matched_ratio`` and ``comparison``), as a dict or an
:class:`hf_eval.data.schema.Tolerance`. A failure raises ``AssertionError`` with the harness's
reason; a pass returns the published metrics: ``{"exact": True}`` for an integer or bool
output, else ``max_absolute_error``, ``matched_ratio`` and ``mismatched_elements``.
A tolerance that breaks the task schema's rules is a ``DataError`` naming the field.
"""

from __future__ import annotations

import sys

import _harness

_harness.use_clone()


def compare_output(actual, expected, tolerance) -> dict:
    """Judge ``actual`` against ``expected`` (the reference) under ``tolerance``."""
    from hf_eval.data.dtypes import is_exact
    from hf_eval.data.schema import Tolerance, parse
    from hf_eval.judge.acceptance import compare

    if not isinstance(tolerance, Tolerance):
        tolerance = parse(Tolerance, tolerance, "tolerance")
    verdict = compare("output", actual, expected, tolerance)
    if not verdict.passed:
        raise AssertionError(verdict.reason)
    if is_exact(expected.dtype):
        return {"exact": True}
    return {"max_absolute_error": verdict.max_absolute_error,
            "matched_ratio": verdict.matched_ratio,
            "mismatched_elements": verdict.mismatched}


if __name__ == "__main__":  # a module to import, not a command: say how
    print(f"{__doc__}\nUse: from task_acceptance import compare_output")
    sys.exit(0)
