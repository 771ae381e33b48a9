"""kernel_acceptance: the task's acceptance of candidate kernels, as an ``evaluate`` metric.

Load it with ``evaluate.load("hf_eval/kernel_acceptance")`` from a clone of the dataset
(the directory holding ``definitions/``, ``workloads/``, ``tasks/``), or, with hf-eval
installed as a wheel, from the package: ``evaluate.load(str(Path(hf_eval.__file__).parent /
"kernel_acceptance"))``, passing ``root=<clone>`` (it defaults to the clone found as the
command line finds it: ``$HF_EVAL_ROOT``, the package's own checkout, the current
directory or a parent). Inputs are light handles, never tensors, because ``evaluate``
writes every input to an Arrow cache first:

- ``predictions``: per case, a candidate: a solution name of the dataset, a path to a
  Solution JSON, or a path to a ``.safetensors`` file holding the candidate's outputs
  (one tensor per output, keyed by the definition's output names);
- ``references``: per case, the UUID of the workload it is judged on.

Solutions are judged by the audit itself (``hf_eval.judge.audit.Audit``, validation only: the
candidate runs in the audit's worker process; inputs, second input set and all); each
case's verdict is read back from the audit's report. A report line that is not a valid
record makes its case ``INVALID_RECORD`` (not accepted, the broken rule its error); a case
without a record is ``NOT_RUN``.
Outputs files are judged by ``hf_eval.judge.acceptance.compare_outputs`` against the
reference, the same code the audit applies to a candidate's returned outputs. A
Solution JSON or a solution from the dataset is code that runs on this machine.
"""

# First, before torch loads OpenMP: importing the package sets the audit's OpenMP policy.
import hf_eval  # noqa: F401

# isort: split

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import evaluate
import torch
from safetensors import SafetensorError, safe_open

from hf_eval.data.cache import ReferenceCache, cache_key
from hf_eval.data.errors import DataError
from hf_eval.data.repository import discover_root
from hf_eval.data.schema import Solution, load_json
from hf_eval.data.sources import compile_reference
from hf_eval.dataset import open_dataset
from hf_eval.judge.acceptance import compare_outputs
from hf_eval.judge.audit import Audit, AuditAborted, AuditConfig, select_workloads
from hf_eval.judge.records import RecordError, Status, reported_time
from hf_eval.judge.report import RecordProblem, ReportLine, read_records

_DESCRIPTION = """\
Accepted fraction of (candidate, workload) cases under the task's published acceptance
rules: shapes, dtypes and devices equal; integer outputs exact; no non-finite values;
the matched-element ratio at least the task's required ratio (every element by default)
under its atol/rtol. Solutions are also checked for modified inputs and for a second
input set, exactly as the audit does.
"""

_INPUTS = """\
Args:
    predictions (list of str): solution name, Solution JSON path, or path to a
        .safetensors file of the candidate's outputs (keys = output names).
    references (list of str): workload UUIDs, one per prediction.
    root (str): dataset root (default: found as ``hf-eval`` finds it: $HF_EVAL_ROOT, the
        package's checkout, the current directory or a parent holding definitions/).
    definition (str, optional): every reference must belong to this definition.
    suite (str): "all" (default), "dev", "sample" or "first": every reference must be in
        this suite of its task.
    device (str): "cpu" (default) or "cuda[:N]".
    timed (bool): also time each solution as the audit does (default False: validation
        only); each case then carries ``ms``, the audit's reported time per call.
Returns:
    accepted_fraction (float), accepted (int), total (int),
    cases (list of dict): per case the prediction, workload, definition, status
        (PASSED, INCORRECT_*, RUNTIME_ERROR, ...; INVALID_RECORD when the audit's record
        of the case breaks a rule, NOT_RUN when there is none), error ("" when accepted)
        and outputs; with ``timed``, ``ms`` (``hf_eval.judge.records.reported_time``: on CUDA the
        device time with inputs not L2-resident; None for an outputs file).
Examples:
    >>> metric = evaluate.load("hf_eval/kernel_acceptance")
    >>> metric.compute(predictions=["torch_toy"], references=["<uuid>"], root=".")
"""

_CITATION = """\
@misc{inference_kernels,
  title = {inference-kernels: real inference-kernel workloads and their acceptance harness},
  year = {2026}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _INPUTS)
class KernelAcceptance(evaluate.Metric):
    """The accepted fraction of candidate kernels on workloads, under the task's rules."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_INPUTS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references, root=None, definition=None, suite="all",
                 device="cpu", timed=False):
        root = Path(root) if root is not None else discover_root()
        dataset = open_dataset(root)
        index = {row.value.workload.uuid: row
                 for rows in dataset.workloads.values() for row in rows}
        cases = []
        for prediction, uuid in zip(predictions, references):
            row = index.get(uuid)
            if row is None:
                raise DataError(str(Path(root)), f"reference {uuid!r} is not a workload UUID "
                                "of this dataset")
            name = row.value.definition
            if definition is not None and name != definition:
                raise DataError(dataset.where(row), f"workload {uuid} belongs to {name}, "
                                f"not {definition}")
            in_suite = select_workloads(dataset, dataset.task(name), name, suite, [])
            if row not in in_suite:
                raise DataError(dataset.where(row), f"workload {uuid} is not in the "
                                f"{suite!r} suite of {name}")
            cases.append({"prediction": prediction, "workload": uuid, "definition": name})
        by_solution = {}
        for case in cases:
            if case["prediction"].endswith(".safetensors"):
                case.update(_judge_outputs(dataset, index[case["workload"]],
                                           Path(case["prediction"]), device))
            else:
                by_solution.setdefault(case["prediction"], []).append(case)
        for prediction, group in by_solution.items():
            verdicts = _audit(dataset, prediction, group, device, timed)
            for case in group:
                verdict = verdicts[case["workload"]]
                case.update(status=verdict.status, error=verdict.error,
                            outputs=verdict.outputs)
                if timed:
                    case["ms"] = verdict.ms
        accepted = sum(c["status"] == Status.PASSED.value for c in cases)
        for case in cases:
            case.setdefault("error", "")
            case.setdefault("outputs", [])
            if timed:
                case.setdefault("ms", None)
        return {"accepted_fraction": accepted / len(cases) if cases else 0.0,
                "accepted": accepted, "total": len(cases), "cases": cases}


def _solution(dataset, prediction):
    """A solution of the dataset by name, or one read from a Solution JSON path."""
    if prediction in dataset.solutions:
        return dataset.solution(prediction), False
    path = Path(prediction)
    if path.suffix == ".json" and path.is_file():
        return load_json(Solution, path), True
    raise DataError(prediction, "prediction is neither a solution of the dataset, a Solution "
                    "JSON file, nor a .safetensors outputs file")


#: The status of a case whose record in the audit's report is not a valid record.
INVALID_RECORD = "INVALID_RECORD"
#: The status of a case the audit wrote no record for.
NOT_RUN = "NOT_RUN"


@dataclass
class Verdict:
    """What the metric reports for one case judged by the audit."""

    status: str
    """A :class:`hf_eval.judge.records.Status` value, ``INVALID_RECORD`` or ``NOT_RUN``."""
    error: str = ""
    """Why it is not accepted ("" when it is)."""
    outputs: list = field(default_factory=list)
    """The per-output verdicts the audit recorded."""
    ms: float | None = None
    """The reported median time per call in milliseconds
    (:func:`hf_eval.judge.records.reported_time`); None when the case was not timed."""


def verdicts_from_report(report: Path, solution: str, uuids: list[str],
                         stopped: str | None = None) -> dict[str, Verdict]:
    """Per workload UUID, the verdict the audit's ``report`` gives ``solution``.

    The last line of a case wins. A line that is not a valid record gives
    ``INVALID_RECORD`` with the broken rule as its error; a case with no line gives
    ``NOT_RUN``, its error ``stopped`` (why the audit stopped) when given.
    """
    verdicts = {uuid: Verdict(NOT_RUN, stopped or "the audit produced no record")
                for uuid in uuids}
    entries = read_records(report).entries if report.is_file() else []
    for entry in entries:
        if isinstance(entry, ReportLine):
            rec = entry.record
            if rec["solution"] == solution and rec["workload"] in verdicts:
                reported = reported_time(rec)
                verdicts[rec["workload"]] = Verdict(rec["status"], rec.get("reason", ""),
                                                    rec.get("outputs", []),
                                                    reported[1] if reported else None)
        elif isinstance(entry, RecordProblem) and entry.workload in verdicts \
                and entry.solution in (solution, None):
            verdicts[entry.workload] = Verdict(
                INVALID_RECORD, "the audit's record of this case is not valid: "
                f"{entry.field}: {entry.rule}")
    return verdicts


def _audit(dataset, prediction, group, device, timed=False) -> dict[str, Verdict]:
    """Run the audit (validation only unless ``timed``) for one candidate on its cases;
    verdicts by UUID.

    An audit stopped by a record that breaks a rule (the writer refuses it) leaves the
    cases it did not record ``NOT_RUN``, the broken rule in their error; any other stop
    is the harness's failure and is raised."""
    solution, external = _solution(dataset, prediction)
    wrong = [c["workload"] for c in group if c["definition"] != solution.definition]
    if wrong:
        raise DataError(prediction, f"solution {solution.name!r} is for "
                        f"{solution.definition}, not the definition of workloads {wrong}")
    uuids = [c["workload"] for c in group]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.jsonl"
        config = AuditConfig(report=report,
                             definitions=[solution.definition],
                             solutions="none" if external else solution.name,
                             extra_solutions=[solution] if external else [],
                             suite="all", uuids=uuids, devices=[device],
                             validation_only=not timed)
        stopped = None
        try:
            Audit(dataset, config).run()
        except AuditAborted as exc:
            if not isinstance(exc.__cause__, RecordError):
                raise
            stopped = f"the audit stopped before recording this case: {exc}"
        return verdicts_from_report(report, solution.name, uuids, stopped)


def _judge_outputs(dataset, row, path, device):
    """Compare a stored outputs file with the reference, as the audit compares outputs."""
    definition = dataset.definition(row.value.definition)
    task = dataset.task(definition.name)
    names = list(definition.outputs)
    try:
        with safe_open(path, framework="pt", device=str(device)) as fh:
            missing = [n for n in names if n not in fh.keys()]
            if missing:
                return {"status": Status.INCORRECT_SHAPE.value,
                        "error": f"{path}: no tensor for output(s) {missing} "
                                 f"(keys: {sorted(fh.keys())})"}
            produced = tuple(fh.get_tensor(n) for n in names)
    except (SafetensorError, FileNotFoundError, OSError) as exc:
        return {"status": Status.RUNTIME_ERROR.value,
                "error": f"{path}: unreadable outputs file ({exc})"}
    try:
        reference = _reference(dataset, definition, row, torch.device(device))
    except DataError as err:
        return {"status": Status.DATA_ERROR.value, "error": str(err)}
    verdicts = compare_outputs(names, produced, reference, task.tolerance_for)
    failed = [v for v in verdicts if not v.passed]
    return {"status": failed[0].status if failed else Status.PASSED.value,
            "error": f"{failed[0].name}: {failed[0].reason}" if failed else "",
            "outputs": [v.to_json() for v in verdicts]}


def _reference(dataset, definition, row, device):
    """The reference outputs of one workload (shared with the audit's reference cache)."""
    cache = ReferenceCache()
    key = cache_key(definition, row.value, device) + "-main"
    cached = cache.get(definition, key, device)
    if cached is not None:
        return cached
    inputs = dataset.materialise_inputs(definition, row, device)
    with torch.no_grad():
        out = compile_reference(definition)(*inputs)
    outputs = out if isinstance(out, tuple) else (out,)
    cache.put(definition, key, outputs)
    return outputs
