"""The audit's CPU timing rule: how many timed calls a case gets on the CPU (no timing here:
the rule's choice is checked, never a clock)."""

from __future__ import annotations

import torch

from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.schema import Timing
from hf_eval.dataset import open_dataset
from hf_eval.judge.trials import CPU_TIMING, CpuTimingRule
from tests.conftest import REPO


def test_a_large_case_gets_fewer_trials_of_one_call_each():
    rule = CpuTimingRule(trials=2, large_bytes=1000, large_trials=1)
    assert rule.timing(0) == Timing(warmup=0, iters=1, trials=2)
    assert rule.timing(999) == Timing(warmup=0, iters=1, trials=2)
    assert rule.timing(1000) == Timing(warmup=0, iters=1, trials=1)
    assert rule.timing(10 ** 12) == Timing(warmup=0, iters=1, trials=1)


def case_bytes(definition, axes: dict[str, int]) -> int:
    """Floating-point input and output bytes of one workload, from its declared shapes
    (what ``Session.case_bytes`` measures on the tensors)."""
    axes = {**definition.const_axes, **axes}
    total = 0
    for specs, inputs in ((definition.inputs, True), (definition.outputs, False)):
        for spec in specs.values():
            dtype = TORCH_DTYPES[spec.dtype]
            if spec.shape is None or (inputs and not dtype.is_floating_point):
                continue
            numel = 1
            for axis in spec.shape:
                numel *= axes[axis]
            total += numel * torch.empty(0, dtype=dtype).element_size()
    return total


def test_the_rule_calls_exactly_the_dense_gemm_samples_large():
    """On the sample: every dense GEMM workload (M >= 4096, the published domain) is timed
    once, every other workload twice."""
    dataset = open_dataset(REPO)
    for name, rows in dataset.workloads.items():
        definition = dataset.definition(name)
        for row in rows:
            trials = CPU_TIMING.timing(case_bytes(definition, row.value.workload.axes)).trials
            expected = 1 if name.startswith("dense_gemm_") else 2
            assert trials == expected, (name, row.value.workload.uuid, trials)
