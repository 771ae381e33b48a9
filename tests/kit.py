"""Loaders the family tests share, built on the harness's own APIs.

The reference and rules tests need the same things: a definition, its reference as a
callable, a solution's entry point, the sample cases and one case's generated inputs, a
task. Going through the harness (``Dataset``, ``compile_reference``, ``load_entry``,
``generate_case``) means the tests exercise the code paths the audit uses, not a private
re-implementation of them. The ``*_json`` loaders return the file as written (a fresh
dict on every call, safe to modify) for tests that check the published JSON itself.

Everything derived from the files is cached for the session, as the per-file helpers it
replaces were; the cached values are shared, so a test that modifies one must copy it
first (``fresh_case_inputs`` gives an uncached copy of a case's inputs).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from hf_eval.data.dtypes import TORCH_DTYPES
from hf_eval.data.schema import Definition, Solution, TaskConfig, load_json
from hf_eval.data.sources import compile_reference, load_entry
from hf_eval.dataset import Dataset, open_dataset
from hf_eval.families import registry
from hf_eval.samples.cases import SampleCase, cases_path, generate_case, load_cases, sample_uuid

REPO = Path(__file__).resolve().parent.parent


@functools.cache
def dataset() -> Dataset:
    """The repository's dataset, indexed once (no tensor resolvers: nothing is fetched)."""
    return open_dataset(REPO, resolvers=[])


# ----------------------------------------------------------------- definitions, references
def _path(kind: str, name: str) -> Path:
    """Where ``Dataset`` found the file; it leaves out files that fail validation, so a
    missing name is reported with the problems that mention it."""
    index = getattr(dataset(), kind)
    if name in index:
        return index[name].path
    problems = [str(p) for p in dataset().problems if name in str(p)]
    raise LookupError(f"no valid {kind} file for {name!r}" + (f": {problems}" if problems else ""))


def definition_path(name: str) -> Path:
    return _path("definitions", name)


@functools.cache
def definition(name: str) -> Definition:
    """The definition, validated by the harness schema."""
    return load_json(Definition, definition_path(name))


def definition_json(name: str) -> dict[str, Any]:
    """The definition file as written (a fresh dict)."""
    return json.loads(definition_path(name).read_text())


@functools.cache
def reference(name: str) -> Callable:
    """The definition's reference ``run``, compiled as the harness compiles it."""
    return compile_reference(definition(name))


def reference_namespace(name: str) -> dict[str, Any]:
    """Every top-level name of the reference source (for its helper functions).

    Read from the module ``compile_reference`` registered (``run`` may be decorated, so its
    own ``__globals__`` can belong to another module)."""
    return vars(sys.modules[reference(name).__module__])


# ----------------------------------------------------------------- solutions
def solution_path(name: str) -> Path:
    return _path("solutions", name)


@functools.cache
def solution(name: str) -> Solution:
    return load_json(Solution, solution_path(name))


def solution_json(name: str) -> dict[str, Any]:
    """The solution file as written (a fresh dict)."""
    return json.loads(solution_path(name).read_text())


def solutions_for(definition_name: str) -> list[Solution]:
    """Every solution of a definition, in file order."""
    return sorted(dataset().solutions_for(definition_name),
                  key=lambda s: solution_path(s.name).as_posix())


def declares(solution: dict[str, Any], device: str) -> bool:
    """Whether a solution file declares hardware of this kind ("cpu", or a GPU for "cuda")."""
    targets = [t.lower() for t in solution["spec"]["target_hardware"]]
    return ("cpu" in targets) if device == "cpu" else any(t != "cpu" for t in targets)


def solutions_json_for(definition_name: str) -> list[dict[str, Any]]:
    """Every solution file of a definition as written (fresh dicts), in file order."""
    return [solution_json(s.name) for s in solutions_for(definition_name)]


def fresh_solution_module(name: str) -> types.ModuleType:
    """A newly imported copy of the solution's entry module (``load_entry``), for a test
    that changes its globals."""
    return load_entry(solution(name)).module


@functools.cache
def solution_module(name: str) -> types.ModuleType:
    """The solution's entry module, written and imported as the harness does; shared."""
    return fresh_solution_module(name)


def solution_namespace(name: str) -> dict[str, Any]:
    """Every top-level name of the solution's entry module."""
    return vars(solution_module(name))


def solution_run(name: str) -> Callable:
    """The solution's entry point (``run``)."""
    return getattr(solution_module(name), solution(name).entry_symbol)


# ----------------------------------------------------------------- tasks
def task_path(name: str) -> Path:
    return _path("tasks", name)


@functools.cache
def task(name: str) -> TaskConfig:
    return load_json(TaskConfig, task_path(name))


def task_json(name: str) -> dict[str, Any]:
    """The task file as written (a fresh dict)."""
    return json.loads(task_path(name).read_text())


# ----------------------------------------------------------------- sample cases
def cases_json(name: str) -> dict[str, Any]:
    """The sample-cases file as written (a fresh dict)."""
    return json.loads(cases_path(name).read_text())


@functools.cache
def _cases(name: str) -> tuple[dict[str, Any], ...]:
    """The cases as validated by the harness (``load_cases``), as plain dicts."""
    return tuple(c.model_dump() for c in load_cases(name).cases)


def cases(name: str) -> list[dict[str, Any]]:
    """The definition's sample cases (label, seed, params), in file order (a copy)."""
    return copy.deepcopy(list(_cases(name)))


def labels(name: str) -> list[str]:
    return [c["label"] for c in _cases(name)]


def case(name: str, label: str) -> dict[str, Any]:
    """One sample case by label."""
    for entry in _cases(name):
        if entry["label"] == label:
            return entry
    raise LookupError(f"{cases_path(name)} has no case {label!r}")


def fresh_case_inputs(name: str, label: str) -> dict[str, Any]:
    """A case's inputs (name -> tensor or scalar, in the definition's order), generated now."""
    return generate_case(definition(name), SampleCase.model_validate(case(name, label)))


@functools.cache
def case_inputs(name: str, label: str) -> dict[str, Any]:
    """A case's inputs, generated once per session and shared: copy before modifying."""
    return fresh_case_inputs(name, label)


@functools.cache
def case_reference(name: str, label: str) -> Any:
    """The reference's output on a case's shared inputs, computed once per session."""
    return reference(name)(*args(name, case_inputs(name, label)))


def args(name: str, inputs: dict[str, Any]) -> list[Any]:
    """``inputs`` as positional arguments, in the definition's input order."""
    return [inputs[key] for key in definition(name).inputs]


# ----------------------------------------------------------------- dev (held-out) split
#: At most this many dev workloads per definition: dev is for iterating, the
#: rest of ``test`` is held out.
DEV_MAX = 5


def assert_dev_held_out(name: str, dev: list[str]) -> None:
    """A task's ``dev`` is 1..DEV_MAX sample UUIDs in case order, a strict subset of them,
    none of a case labelled outside the published domain."""
    every = [sample_uuid(name, c["label"]) for c in cases(name)]
    assert 1 <= len(dev) <= DEV_MAX, f"{name}: {len(dev)} dev workloads"
    assert len(set(dev)) == len(dev), f"{name}: a dev UUID is repeated"
    assert dev == [u for u in every if u in set(dev)], f"{name}: dev is not sample UUIDs " \
        "in case order"
    assert len(dev) < len(every), f"{name}: nothing is held out of dev"
    outside = [c["label"] for c in cases(name)
               if c.get("outside_domain") and sample_uuid(name, c["label"]) in set(dev)]
    assert not outside, f"{name}: dev cases outside the published domain: {outside}"


# ----------------------------------------------------------------- value rules
def run_keeping_inputs(run: Callable, inputs: dict[str, Any],
                       args_of: Callable[[dict[str, Any]], list[Any]]) -> Any:
    """``run(*args_of(inputs))``, asserting that no input changed and that the output is
    none of them."""
    before = copy_inputs(inputs)
    out = run(*args_of(inputs))
    assert all(torch.equal(before[k], inputs[k]) for k in inputs)
    assert not any(out.data_ptr() == v.data_ptr() for v in inputs.values())
    return out


def copy_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """A copy of an input set that a test may modify (tensors cloned)."""
    return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def assert_one_problem(problems: list[str], name: str, *phrases: str) -> None:
    """Exactly one problem, about input ``name``, saying each of ``phrases``."""
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{name}:"), problems[0]
    for phrase in phrases:
        assert phrase in problems[0], problems[0]


def keeps_inputs_test(names: list[str]):
    """The test that runs each definition's reference on its first sample case and asserts
    its inputs unchanged (:func:`assert_reference_keeps_inputs`); bind it in the module as
    ``test_reference_does_not_mutate_inputs``."""
    @pytest.mark.parametrize("name", names)
    def test_reference_does_not_mutate_inputs(name: str) -> None:
        assert_reference_keeps_inputs(name, cases(name)[0]["label"])

    return test_reference_does_not_mutate_inputs


def rule_violation_tests(name: str, check: Callable[[str, dict], list[str]],
                         valid: Callable[[], dict],
                         violations: list[tuple[Callable[[dict], None], str, str]]):
    """The two tests of a family whose rules are listed as ``(violate, input, phrase)``:
    the valid input set passes, and each violation alone is exactly one problem naming its
    input and saying its phrase. Assign them to ``test_*`` names in the test module."""
    def test_valid_inputs_pass() -> None:
        assert check(name, valid()) == []

    @pytest.mark.parametrize("violate,input_name,phrase", violations,
                             ids=[v[0].__name__ for v in violations])
    def test_each_rule_reports_one_problem(violate: Callable[[dict], None], input_name: str,
                                           phrase: str) -> None:
        inputs = valid()
        violate(inputs)
        assert_one_problem(check(name, inputs), input_name, phrase)

    return test_valid_inputs_pass, test_each_rule_reports_one_problem


def assert_sink_and_scale_rules(check: Callable[[str, dict], list[str]], name: str,
                                valid: Callable[[], dict], bad_sink: float,
                                bad_scale: float) -> None:
    """The MLA families' sink and scale rules: a ``bad_sink`` logit is one problem, no sink
    at all (every logit -inf) is allowed, and a ``bad_scale`` is one problem."""
    inputs = valid()
    inputs["attn_sink"][0] = bad_sink
    assert_one_problem(check(name, inputs), "attn_sink")
    inputs = valid()
    inputs["attn_sink"][:] = -math.inf  # no sink: allowed
    inputs["sm_scale"] = bad_scale
    assert_one_problem(check(name, inputs), "sm_scale")


# ----------------------------------------------------------------- one definition's tests
def bind(name: str, solution_name: str) -> tuple:
    """The loaders a one-definition test file uses, bound to its definition and solution:
    ``definition, reference, solution, cases, case_inputs, case_reference, labels``
    (definition JSON, reference namespace, solution namespace, then as above)."""
    return (functools.partial(definition_json, name),
            functools.partial(reference_namespace, name),
            functools.partial(solution_namespace, solution_name),
            functools.partial(cases, name), functools.partial(case_inputs, name),
            functools.partial(case_reference, name), labels(name))


def assert_reference_keeps_inputs(name: str, label: str) -> None:
    """The reference leaves a case's inputs as they were (compared byte for byte)."""
    inputs = fresh_case_inputs(name, label)
    before = copy_inputs(inputs)
    reference(name)(*args(name, inputs))
    for key, value in inputs.items():
        same = torch.equal(value, before[key]) if isinstance(value, torch.Tensor) \
            else value == before[key]
        assert same, key


def solution_cases(names: Any, devices: list[str],
                   runs_on: Callable[[dict[str, Any], str], bool] = declares) -> list[tuple]:
    """``(definition, solution, case label, device)`` for every solution of each definition
    in ``names``, every sample case and every one of ``devices`` the solution file runs on
    (``runs_on(solution_json, device)``)."""
    return [(name, sol["name"], case["label"], device)
            for name in names for sol in solutions_json_for(name) for case in cases(name)
            for device in devices if runs_on(sol, device)]


#: Where the solution tests run: the CPU, and CUDA where there is one.
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def over_solution_cases(names: Any, devices: list[str],
                        runs_on: Callable[[dict[str, Any], str], bool] = declares):
    """Parametrize a test over :func:`solution_cases` as ``(name, solution, label,
    device)``."""
    return pytest.mark.parametrize(("name", "solution", "label", "device"),
                                   solution_cases(names, devices, runs_on))


def assert_family_data(name: str, module: str) -> None:
    """The definition's cases file names it, and its ``op_type`` is the family ``module``."""
    assert cases_json(name)["definition"] == name
    assert registry.find(definition(name).op_type).module == module


def assert_bf16_rounding_of(out: torch.Tensor, exact: torch.Tensor) -> None:
    """``out`` is BF16 and within one BF16 ulp (2**-7 relative) of the exact result."""
    assert out.dtype == torch.bfloat16
    assert out.shape == exact.shape
    torch.testing.assert_close(out.double(), exact.double(), rtol=2 ** -7, atol=1e-5)


def matched_ratio(out: torch.Tensor, ref: torch.Tensor, tol: dict[str, Any]) -> float:
    """Fraction of elements with |a - r| <= atol + rtol |r| (the task's comparison)."""
    err = (out.double().cpu() - ref.double().cpu()).abs()
    good = err <= tol["atol"] + tol["rtol"] * ref.double().cpu().abs()
    return int(good.sum()) / good.numel()


def run_solution_on_case(name: str, solution_name: str, label: str, device: str,
                         keys: Any) -> tuple:
    """Run the solution's ``run`` and the reference on fresh copies of a sample case's
    inputs ``keys`` (in that order) moved to ``device``; asserts the output has the
    reference's shape, dtype and device, is contiguous and is no input. Returns ``(module
    namespace, args, copies of args taken before, reference output, output)``; the solution
    file is validated by the schema first."""
    module = solution_namespace(solution_name)
    inputs = fresh_case_inputs(name, label)
    call_args = [inputs[key].to(device) for key in keys]
    before = [a.clone() for a in call_args]
    ref = reference(name)(*call_args)
    out = module["run"](*call_args)
    assert out.shape == ref.shape and out.dtype == ref.dtype and out.device == ref.device
    assert out.is_contiguous()
    assert all(out.data_ptr() != a.data_ptr() for a in call_args)
    return module, call_args, before, ref, out


def assert_unchanged(tensors: list[torch.Tensor], before: list[torch.Tensor]) -> None:
    """Each tensor still equals its copy taken before (no input was modified)."""
    for a, b in zip(tensors, before, strict=True):
        assert torch.equal(a, b)


#: The LTX attention tasks' published tolerance (BF16 outputs), every element within it.
LTX_ALLCLOSE = {"atol": 0.005, "rtol": 0.016, "required_matched_ratio": None,
                "comparison": "allclose"}


def checked_task_config(name: str, workloads: str, tolerance: dict[str, Any]) -> dict[str, Any]:
    """The task JSON, asserted to name the definition, its workload file ``workloads`` (the
    one path), the ``tolerance`` given and a held-out dev set."""
    config = task_json(name)
    assert config["definition"] == name
    assert config["workloads"] == [workloads]
    assert config["tolerance"] == tolerance
    assert_dev_held_out(name, config["dev"])
    return config


def checked_task_json(name: str, solution_name: str, definition_schema: Any,
                      solution_schema: Any) -> dict[str, Any]:
    """The definition and solution files validated by the schemas given, the solution
    asserted to be of the definition and not destination-passing; returns the task JSON,
    asserted to name the definition."""
    definition_schema.model_validate(definition_json(name))
    sol = solution_json(solution_name)
    solution_schema.model_validate(sol)
    assert sol["definition"] == name and sol["spec"]["destination_passing_style"] is False
    config = task_json(name)
    assert config["definition"] == name
    return config


def run_entry_on_case(entry: Any, name: str, label: str) -> tuple[list[Any], list[Any]]:
    """Run a loaded solution ``entry`` (through its ``prepare`` when it has one) on a sample
    case and assert every output passes the task's tolerance against the case's reference;
    returns the arguments and copies of them taken before the call."""
    from hf_eval.judge.acceptance import compare_outputs

    call_args = args(name, case_inputs(name, label))
    before = [a.clone() if isinstance(a, torch.Tensor) else a for a in call_args]
    expected = case_reference(name, label)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = entry.prepare(*call_args)() if entry.prepare else entry.run(*call_args)
    verdicts = compare_outputs(list(definition(name).outputs), got, expected,
                               task(name).tolerance_for)
    assert all(v.passed for v in verdicts), [v.to_json() for v in verdicts]
    return call_args, before


def assert_within_task_tolerance(name: str, out: Any, ref: Any) -> None:
    """``out`` has the reference's dtype and shape, is finite, and every element is within
    the task's ``atol + rtol * |ref|``."""
    assert out.dtype == ref.dtype and out.shape == ref.shape
    assert bool(torch.isfinite(out.float()).all())
    tol = task_json(name)["tolerance"]
    close = (out.float() - ref.float()).abs() <= tol["atol"] + tol["rtol"] * ref.float().abs()
    assert bool(close.all()), f"{int((~close).sum())} elements out of tolerance"


def _bytes(tensor: torch.Tensor) -> bytes:
    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def generated_twice(generate: Callable[[Definition, dict, int], dict], name: str,
                    case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The family generator's inputs for a case, made twice from its params and seed,
    asserted to be the definition's inputs in the definition's order."""
    first = generate(definition(name), case["params"], case["seed"])
    second = generate(definition(name), case["params"], case["seed"])
    assert list(first) == list(definition_json(name)["inputs"])
    return first, second


def assert_inputs_as_specified(spec: dict[str, Any], first: dict[str, Any],
                               second: dict[str, Any], sizes: dict[str, int],
                               dtypes: dict[str, torch.dtype]) -> None:
    """Generated inputs ``first`` match the definition JSON ``spec``: a scalar is a float
    equal to its value in ``second``; a tensor has its dtype (named in ``dtypes``), the
    shape given by ``sizes`` and the bytes of its twin in ``second``."""
    for key, value in first.items():
        input_spec = spec["inputs"][key]
        if input_spec["shape"] is None:
            assert isinstance(value, float) and value == second[key]
            continue
        assert value.dtype == dtypes[input_spec["dtype"]]
        assert list(value.shape) == [sizes[a] for a in input_spec["shape"]]
        assert value.view(torch.int8).numpy().tobytes() == \
            second[key].view(torch.int8).numpy().tobytes()


def assert_generator_deterministic(name: str,
                                   generate: Callable[[Definition, dict, int], dict],
                                   case: dict[str, Any]) -> dict[str, Any]:
    """The family's generator gives the same bytes twice for a case, every input of the
    definition with its dtype, rank and consistent axes (constants included); returns the
    inputs."""
    first = generate(definition(name), case["params"], case["seed"])
    second = generate(definition(name), case["params"], case["seed"])
    spec = definition(name)
    assert set(first) == set(spec.inputs)
    axes: dict[str, int] = dict(spec.const_axes)
    for key, tensor_spec in spec.inputs.items():
        value = first[key]
        if tensor_spec.shape is None:
            assert value == second[key], key
            continue
        assert value.dtype == TORCH_DTYPES[tensor_spec.dtype], key
        assert value.dim() == len(tensor_spec.shape), key
        for axis, size in zip(tensor_spec.shape, value.shape):
            assert axes.setdefault(axis, size) == size, (key, axis)
        assert _bytes(value) == _bytes(second[key]), key
    return first
