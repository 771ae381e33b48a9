"""Validated models of every file the dataset holds, and loaders whose errors name the place.

The fields and rules are FlashInfer Trace's (FlashInfer-Bench 0.1.2, see
``../shared/spec/peers.md``) plus this project's own (task configs). Models forbid
unknown fields, so a typo in a key is an error rather than a silently ignored value; the
receipts (``captures.jsonl``) are the exception: they keep the published format's keys of
their own and write them back unchanged.
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, TypeVar

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    Tag,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from hf_eval.data.errors import DataError

NonEmpty = Annotated[str, Field(min_length=1)]
DTypeName = Literal["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                    "float4_e2m1", "int64", "int32", "int16", "int8", "bool"]


def stays_inside(path: str) -> bool:
    """Whether a relative POSIX path stays under the directory it is relative to."""
    pure = PurePosixPath(path)
    return not (pure.is_absolute() or ".." in pure.parts or "\\" in path)


class Model(BaseModel):
    """Base of every model: unknown keys are errors. Each field's docstring is its
    description (the card's field list is written from them)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# ----------------------------------------------------------------------------- definitions
class ConstAxis(Model):
    type: Literal["const"]
    """Always ``const``: the axis has one size in every workload."""
    value: Annotated[int, Field(ge=0)]
    """The axis's fixed size (>= 0); a workload that gives this axis must give this value."""
    description: str | None = None
    """Free text: what the axis counts."""


class VarAxis(Model):
    type: Literal["var"]
    """Always ``var``: each workload gives the axis's size in its ``axes``."""
    description: str | None = None
    """Free text: what the axis counts."""


class TensorSpec(Model):
    """An input or output: a list of axis names, or ``None`` for a Python scalar."""

    shape: list[NonEmpty] | None
    """The axis names of its dimensions, outermost first, each declared in the definition's
    ``axes``; ``None`` (JSON null) for a Python scalar."""
    dtype: DTypeName
    """The element type, one of FlashInfer Trace's dtype names (for a scalar, its value's type)."""
    description: str | None = None
    """Free text: what the tensor holds (meaning, layout)."""


class Definition(Model):
    name: NonEmpty
    """The definition's name, unique in the dataset; its file is
    ``definitions/<op_type>/<name>.json``."""
    op_type: NonEmpty
    """The operator family (``gemm``, ``gdn``, ...): the folder the file lives in, and the family
    module ``hf_eval/families/<op_type>/`` where there is one."""
    description: str | None = None
    """Free text: what the operator computes, where it comes from, how it is judged."""
    tags: list[NonEmpty] = []
    """Labels in FlashInfer Trace's namespaces (``model:``, ``stage:``, ``status:``,
    ``quantization:``) and free ones (``layout:``; ``interface:``, its interface-audit entry,
    or ``interface:not-audited``)."""
    axes: dict[NonEmpty, Annotated[ConstAxis | VarAxis, Field(discriminator="type")]]
    """The axes by name: ``const`` (a fixed size) or ``var`` (each workload gives it); every
    axis an input or output shape names must be declared here."""
    inputs: dict[NonEmpty, TensorSpec]
    """The inputs by name, in the order the reference's ``run`` takes them; no name may also be
    an output's."""
    outputs: dict[NonEmpty, TensorSpec]
    """The outputs by name, in the order the reference's ``run`` returns them."""
    constraints: list[NonEmpty] = []
    """Python expressions over the axis names (``M >= 1``) that every workload's axes must
    satisfy; each must parse, and is evaluated without builtins (``math`` available)."""
    reference: NonEmpty
    """Python source of the reference, the truth outputs are judged against: it must parse and
    define a top-level ``run`` that takes the inputs and returns the outputs."""

    @field_validator("reference")
    @classmethod
    def _reference_defines_run(cls, source: str) -> str:
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"must be valid Python ({exc.msg}, line {exc.lineno})") from None
        if not any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body):
            raise ValueError("must define a top-level function named 'run'")
        return source

    @field_validator("constraints")
    @classmethod
    def _constraints_parse(cls, constraints: list[str]) -> list[str]:
        for text in constraints:
            try:
                ast.parse(text, mode="eval")
            except SyntaxError:
                raise ValueError(f"constraint {text!r} is not a Python expression") from None
        return constraints

    @model_validator(mode="after")
    def _names_and_axes(self) -> Definition:
        overlap = set(self.inputs) & set(self.outputs)
        if overlap:
            raise ValueError(f"input and output names overlap: {sorted(overlap)}")
        for role, specs in (("input", self.inputs), ("output", self.outputs)):
            for name, spec in specs.items():
                for axis in spec.shape or []:
                    if axis not in self.axes:
                        raise ValueError(f"{role} {name!r} uses undeclared axis {axis!r}")
        return self

    @property
    def const_axes(self) -> dict[str, int]:
        return {k: a.value for k, a in self.axes.items() if isinstance(a, ConstAxis)}

    @property
    def var_axes(self) -> list[str]:
        return [k for k, a in self.axes.items() if isinstance(a, VarAxis)]

    def shape_of(self, spec: TensorSpec, axes: dict[str, int]) -> tuple[int, ...] | None:
        """The concrete shape of ``spec`` given the workload's variable axes."""
        if spec.shape is None:
            return None
        values = {**axes, **self.const_axes}
        return tuple(values[a] for a in spec.shape)

    def violated_constraints(self, axes: dict[str, int]) -> list[str]:
        """The constraints that do not hold for these axis values (evaluated without builtins)."""
        scope = {**axes, **self.const_axes}
        failed = []
        for text in self.constraints:
            try:
                ok = eval(text, {"__builtins__": {}, "math": math}, dict(scope))  # noqa: S307
            except Exception as exc:  # a constraint naming an unknown axis is a failure too
                failed.append(f"{text} ({type(exc).__name__}: {exc})")
                continue
            if not ok:
                failed.append(text)
        return failed


# ------------------------------------------------------------------------------- workloads
class RandomInput(Model):
    type: Literal["random"]
    """Always ``random``: the runner draws the tensor. Refused in this dataset's workloads; an
    import draws it with a recorded seed instead."""


class ScalarInput(Model):
    type: Literal["scalar"]
    """Always ``scalar``: a Python scalar argument given inline."""
    value: StrictBool | StrictInt | StrictFloat
    """The scalar: a JSON boolean, integer or number, taken as is (a string is never converted)."""


class SafetensorsInput(Model):
    type: Literal["safetensors"]
    """Always ``safetensors``: the tensor is read from a safetensors file."""
    path: NonEmpty
    """The file's path relative to the dataset root (no leading ``/``, no ``..``); in this
    dataset ``blob/workloads/<definition>/<sha256>.safetensors``."""
    tensor_key: NonEmpty
    """The tensor's key inside that file."""

    @field_validator("path")
    @classmethod
    def _relative_inside(cls, path: str) -> str:
        parts = PurePosixPath(path).parts
        if PurePosixPath(path).is_absolute() or ".." in parts:
            raise ValueError("must be a relative path inside the dataset (no '/' prefix, no '..')")
        return path


InputDescriptor = Annotated[RandomInput | ScalarInput | SafetensorsInput,
                            Field(discriminator="type")]


class Workload(Model):
    uuid: NonEmpty
    """The workload's UUID, unique in the dataset; its receipt in ``captures.jsonl`` names it."""
    axes: dict[NonEmpty, Annotated[int, Field(ge=0)]]
    """The size of each variable axis by name (each >= 0); a constant axis given here must equal
    the definition's value."""
    inputs: dict[NonEmpty, InputDescriptor]
    """A descriptor per input, by the definition's input names: safetensors, scalar or random."""


class WorkloadTrace(Model):
    """One line of a workload file: a workload-only FlashInfer trace."""

    definition: NonEmpty
    """The name of the definition the workload is for."""
    workload: Workload
    """The workload: its UUID, axis sizes and input descriptors."""
    solution: None = None
    """Always null in a workload file (FlashInfer Trace's solution slot of a trace)."""
    evaluation: None = None
    """Always null in a workload file (FlashInfer Trace's evaluation slot of a trace)."""


# ------------------------------------------------------------------------------- solutions
def normalise_source_path(path: str) -> str:
    """A solution's source path in its one spelling: ``./main.py`` and ``main.py`` are
    ``main.py``, ``a//b.py`` and ``a/./b.py`` are ``a/b.py``.

    Raises ``ValueError`` for a path that names no file inside the package: empty or
    ``.``, absolute, through ``..``, with a backslash or a control character.
    """
    if "\\" in path:
        raise ValueError("source path must use '/' between directories (no backslash)")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in path):
        raise ValueError("source path must not hold control characters")
    if not stays_inside(path):
        raise ValueError("source path must stay inside the package (no absolute path, no '..')")
    normal = PurePosixPath(path).as_posix()
    if normal == ".":
        raise ValueError("source path must name a file (not empty, not '.')")
    return normal


class SourceFile(Model):
    """One file of a solution's package; ``path`` is kept normalised
    (:func:`normalise_source_path`), so two spellings of one file are one path."""

    path: NonEmpty
    """The file's path inside the package, ``/``-separated; normalised on load, and never
    absolute, through ``..``, with a backslash or a control character."""
    content: NonEmpty
    """The file's full text: non-empty, without a NUL byte."""

    @field_validator("path")
    @classmethod
    def _normalised_inside_package(cls, path: str) -> str:
        return normalise_source_path(path)

    @field_validator("content")
    @classmethod
    def _text(cls, content: str) -> str:
        """Source text: Python refuses a NUL byte in source, and each one costs six bytes
        in the JSON that carries a package to its worker."""
        if "\x00" in content:
            raise ValueError(f"holds a NUL byte (at character {content.index(chr(0))}): "
                             "not source text")
        return content


def _commit_pinned_url(url: str | None) -> bool:
    """A direct reference fixed to one commit (``name @ git+https://...@<40 hex digits>``):
    as exact a pin as ``==`` for a library built from its source."""
    return bool(url) and re.fullmatch(r"git\+https://\S+@[0-9a-f]{40}", url) is not None


class BuildSpec(Model):
    language: Literal["python", "triton", "cpp", "cuda", "tilelang"]
    """The source language (FlashInfer Trace's five); this harness does not read it and imports
    the entry file as a Python module."""
    target_hardware: Annotated[list[NonEmpty], Field(min_length=1)]
    """Hardware it runs on, at least one: ``cpu``, ``cuda`` (any GPU), ``local`` (anywhere) or a
    named GPU (``NVIDIA_B200``); the audit skips the solution on any other device."""
    entry_point: NonEmpty
    """The function to call, as ``<file>::<function>`` (``main.py::run``); the file must be one
    of the sources."""
    dependencies: list[NonEmpty] = []
    """Requirement strings of the packages it needs, each pinned by a version specifier
    (``torch>=2.9``) or a ``git+https`` URL at a full 40-hex commit."""
    destination_passing_style: bool = True
    """FlashInfer Trace: whether the outputs are passed in as the last arguments to fill. Must be
    false here: a solution gets the inputs only and returns its outputs."""
    binding: Literal["tvm-ffi", "torch"] | None = None
    """FlashInfer Trace: the binding of a C++/CUDA solution (``tvm-ffi`` or ``torch``), ignored
    for Python and Triton; this harness does not read it."""

    @field_validator("entry_point")
    @classmethod
    def _file_and_symbol(cls, entry: str) -> str:
        if entry.count("::") != 1 or not all(entry.split("::")):
            raise ValueError("must be '<file>::<function>', e.g. 'main.py::run'")
        return entry

    @field_validator("dependencies")
    @classmethod
    def _pinned(cls, deps: list[str]) -> list[str]:
        for dep in deps:
            try:
                req = Requirement(dep)
            except InvalidRequirement:
                raise ValueError(f"dependency {dep!r} is not a valid requirement") from None
            if not req.specifier and not _commit_pinned_url(req.url):
                raise ValueError(f"dependency {dep!r} must state a version (e.g. 'torch>=2.9') "
                                 "or a source URL pinned to a full commit hash")
        return deps


#: The most source a solution's package may hold, in UTF-8 bytes over all its files.
MAX_PACKAGE_BYTES = 16 << 20
#: The most files a solution's package may hold.
MAX_PACKAGE_FILES = 1000


class Solution(Model):
    name: NonEmpty
    """The solution's name, unique in the dataset; tasks and the audit name it by this."""
    definition: NonEmpty
    """The name of the definition it implements."""
    author: NonEmpty
    """Who wrote it (with any upstream it was taken from and its licence)."""
    description: str | None = None
    """Free text: what the solution does and how."""
    spec: BuildSpec
    """How to build and call it: language, target hardware, entry point, dependencies."""
    sources: Annotated[list[SourceFile], Field(min_length=1)]
    """The package's files, at least one: no two naming one file, the entry file among them, at
    most 1,000 files and 16 MiB of UTF-8 in all (:data:`MAX_PACKAGE_FILES`, ``_BYTES``)."""

    @field_validator("sources", mode="before")
    @classmethod
    def _one_source_per_file(cls, sources: Any) -> Any:
        """Two sources must not name one file, however spelled: the second would
        overwrite the first when the package is written, so what runs is not what is
        shown. (Checked on the paths as given, so the message shows both spellings; a
        path that does not normalise is left to :class:`SourceFile`'s error.)"""
        if not isinstance(sources, list):
            return sources
        seen: dict[str, str] = {}
        for source in sources:
            path = source.get("path") if isinstance(source, dict) else None
            try:
                normal = normalise_source_path(path) if isinstance(path, str) else None
            except ValueError:
                normal = None
            if normal is None:
                continue
            if normal in seen:
                first, second = sorted((seen[normal], path))
                if first == second:
                    raise ValueError(f"duplicate source path: {first}")
                raise ValueError(f"duplicate source path after normalising: {first} and "
                                 f"{second}")
            seen[normal] = path
        return sources

    @model_validator(mode="after")
    def _bounded(self) -> Solution:
        """A package the audit can hold and send (it is copied into every worker's load
        request) whatever its files are."""
        if len(self.sources) > MAX_PACKAGE_FILES:
            raise ValueError(f"sources: {len(self.sources)} files, over the limit of "
                             f"{MAX_PACKAGE_FILES}")
        total = sum(len(s.content.encode("utf-8", "surrogatepass")) for s in self.sources)
        if total > MAX_PACKAGE_BYTES:
            raise ValueError(f"sources: {total} bytes in all, over the limit of "
                             f"{MAX_PACKAGE_BYTES} ({MAX_PACKAGE_BYTES >> 20} MiB)")
        return self

    @model_validator(mode="after")
    def _entry_present_no_duplicates(self) -> Solution:
        paths = [s.path for s in self.sources]
        if len(set(paths)) != len(paths):  # sources given as models skip the check above
            raise ValueError("duplicate source path after normalising")
        entry_file = self.spec.entry_point.split("::")[0]
        try:
            entry_present = normalise_source_path(entry_file) in paths
        except ValueError:
            entry_present = False
        if not entry_present:
            raise ValueError(f"entry file {entry_file!r} is not among the sources")
        if self.spec.destination_passing_style:
            raise ValueError("destination_passing_style must be false: the harness passes "
                             "inputs only and compares the returned outputs")
        return self

    @property
    def entry_file(self) -> str:
        return self.spec.entry_point.split("::")[0]

    @property
    def entry_symbol(self) -> str:
        return self.spec.entry_point.split("::")[1]


# ----------------------------------------------------------------------------------- tasks
class Tolerance(Model):
    atol: Annotated[float, Field(ge=0)]
    """The absolute tolerance (>= 0), in the output's units."""
    rtol: Annotated[float, Field(ge=0)]
    """The relative tolerance (>= 0), as a fraction of the reference element's magnitude."""
    required_matched_ratio: Annotated[float, Field(gt=0, le=1)] | None = None
    """The least fraction of an output's elements that must match, in (0, 1]; ``None`` (JSON
    null) means every element."""
    comparison: Literal["allclose", "absolute_or_relative"] = "allclose"
    """How an element matches: ``allclose`` is ``|a - r| <= atol + rtol * |r|``;
    ``absolute_or_relative`` is ``|a - r| <= atol`` or ``|a - r| / (|r| + 1e-8) <= rtol``.
    Integer and bool outputs must be exact whatever it says."""


class Timing(Model):
    warmup: Annotated[int, Field(ge=0)] = 10
    """Warm-up calls before timing on CUDA (compilation, autotuning), judged but outside the
    reported time (>= 0)."""
    iters: Annotated[int, Field(ge=1)] = 50
    """Calls per timing trial on CUDA (a CUDA graph replays this many), fewer where that many
    fresh input sets would overflow the audit's memory pool (>= 1)."""
    trials: Annotated[int, Field(ge=1)] = 3
    """Timed trials on CUDA (>= 1); the reported figure is the median over them."""


class Baseline(Model):
    solution: NonEmpty
    """The name of the solution a candidate is timed against, a solution of this definition."""
    timed: Literal["call", "launch"] = "call"
    """What is timed of it: ``call`` (each whole call) or ``launch`` (only the zero-argument
    ``launch`` that its ``prepare`` returns)."""


class Preferred(Model):
    solution: NonEmpty
    """The name of the solution chosen on that hardware, a solution of this definition."""
    evidence: NonEmpty
    """Free text: the measurements or reasons that chose it."""


class TaskConfig(Model):
    definition: NonEmpty
    """The name of the definition judged; the file is ``tasks/<definition>.json``."""
    workloads: Annotated[list[NonEmpty], Field(min_length=1)]
    """Workload files judged (JSONL, relative to the dataset root): at least one, each existing."""
    tolerance: Tolerance
    """The tolerance every output is judged by, unless ``output_tolerances`` gives its own."""
    output_tolerances: dict[NonEmpty, Tolerance] = {}
    """Tolerances of single outputs by output name (each an output of the definition)."""
    dev: Annotated[list[NonEmpty], Field(max_length=10)] = []
    """At most ten workload UUIDs for quick iteration (the ``dev`` suite): each a workload of the
    definition inside the published domain. Final judgments use every workload."""
    timing: Timing = Timing()
    """How many warm-up calls, calls per trial and trials the audit times on CUDA."""
    baseline: Baseline
    """The solution a candidate is timed against, and what of it is timed."""
    engine_baseline: NonEmpty | None = None
    """The name of the solution that reproduces the serving engine's own call, or ``None`` where
    there is none; a solution of this definition, agreeing with the interface audit's entry."""
    preferred: dict[NonEmpty, Preferred] = {}
    """The preferred solution per hardware key (``cpu``, ``h200``, ...) with the evidence that
    chose it; the audit's default runs the device's, else ``cpu``'s, else the baseline."""
    call_timeout_s: Annotated[float, Field(gt=0)] = 300.0
    """The deadline in seconds of each request to a solution's worker (loading it, a call);
    a timing request gets three times it, and a case's requests together three times it.
    > 0; 300 by default."""
    diagnostic_tolerance: Tolerance | None = None
    """A stricter bound reported by ``audit --strict-diagnostic``, never used for
    acceptance."""
    timed_allowance: bool = False
    """Whether calls on content the audit draws (timed calls, the second input set) may
    miss the tolerance on a few elements on CUDA (:func:`hf_eval.judge.trials.judge_outputs`).
    Set where honest kernels were seen on the H200 to miss it on an element or three of
    some fresh sets, on definitions whose work is spread over output rows of many
    elements (work skipped there misses on more elements than the allowance admits);
    elsewhere every call is judged by the tolerance alone."""

    def tolerance_for(self, output: str) -> Tolerance:
        return self.output_tolerances.get(output, self.tolerance)


# -------------------------------------------------------------------------------- receipts
class Kept(BaseModel):
    """Base of the receipt models: a published file's own format, read unchanged.

    Unknown keys are kept (``extra="allow"``), and :meth:`to_json` gives the keys that
    were read, in the order they were read, plus any set since, so that a line read and
    written again unchanged is the same bytes (:meth:`Receipt.to_line`). Known fields
    are strict: a value is never converted (a seed of ``"7"`` is an error, not ``7``).
    """

    model_config = ConfigDict(extra="allow", strict=True, use_attribute_docstrings=True)
    _order: list[str] = PrivateAttr(default_factory=list)
    """The keys of the data read, in the order read (kept by ``_remember_order``); the serializer
    writes those keys first, in that order."""

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: Any) -> Kept:
        model = handler(data)
        if isinstance(data, dict):
            model._order = list(data)
        return model

    @model_serializer(mode="wrap")
    def _in_read_order(self, handler: Any) -> Any:
        out = handler(self)
        if not isinstance(out, dict):
            return out
        first = {k: out[k] for k in self._order if k in out}
        return {**first, **{k: v for k, v in out.items() if k not in first}}

    def to_json(self) -> dict[str, Any]:
        """The keys read (or set), in order; defaults never read or set are left out."""
        return self.model_dump(mode="json", exclude_unset=True)


class Provenance(Kept):
    """Where a workload came from. Unknown keys carry details (request, engine op, ...)."""

    kind: Literal["generated", "captured", "imported"] | None = None
    """``generated`` (a sample drawn by a generator), ``captured`` (recorded from a running
    program) or ``imported`` (taken from another dataset); when given, the keys that kind
    needs are required. Absent in receipts that do not label their kind."""
    generator: NonEmpty | None = None
    """A generated workload's generator: the module of its family (``hf_eval.families.*``)."""
    seed: int | None = None
    """A generated workload's seed."""
    case: NonEmpty | None = None
    """A generated workload's case label in
    ``hf_eval/families/<op_type>/<definition>.cases.json``."""
    program: NonEmpty | None = None
    """A captured workload's program (the script the capture ran)."""
    source: NonEmpty | None = None
    """An imported workload's source dataset."""
    outside_domain: NonEmpty | None = None
    """Why a generated workload lies outside the published dataset's curated domain (its
    recipe's ``outside_domain``); absent for one inside it. Such a workload is never a
    task's dev workload and never decides a preferred solution."""

    @model_validator(mode="after")
    def _required_per_kind(self) -> Provenance:
        if self.kind is None:
            return self
        need = {"generated": ("generator", "seed"), "captured": ("program",),
                "imported": ("source",)}[self.kind]
        missing = [k for k in need if getattr(self, k) is None]
        if missing:
            raise ValueError(f"a {self.kind} workload's provenance needs {', '.join(missing)}")
        return self


#: The two spellings of ``expected_output`` (the tags of its union).
ONE_DESCRIPTOR, BY_OUTPUT = "one descriptor", "by output"


def _expected_shape(value: Any) -> str:
    """One descriptor (its ``type`` is a string) or a dict of descriptors by output name."""
    if isinstance(value, SafetensorsInput) or (
            isinstance(value, dict) and isinstance(value.get("type"), str)):
        return ONE_DESCRIPTOR
    return BY_OUTPUT


ExpectedOutput = Annotated[
    Annotated[SafetensorsInput, Tag(ONE_DESCRIPTOR)]
    | Annotated[dict[NonEmpty, SafetensorsInput], Tag(BY_OUTPUT)],
    Discriminator(_expected_shape)]


class Receipt(Kept):
    """One line of ``captures.jsonl``: what is known about one workload, by its UUID.

    Only ``uuid`` and ``definition`` are required. The published receipts also carry the
    model revision, request, engine operation and so on under keys of their own: those
    are kept and written back as they were read.
    """

    uuid: NonEmpty
    """The workload's UUID (``workload.uuid`` of one line of ``workloads/``)."""
    definition: NonEmpty
    """The name of the workload's definition."""
    provenance: Provenance | None = None
    """Where the workload came from: a generator and seed, a capture, an import."""
    adaptations: Any = None
    """How the engine's call was adapted to the definition's inputs (this harness's
    capture writes a list of strings), as the receipt recorded them."""
    expected_output: ExpectedOutput | None = None
    """The engine's own output, saved when the workload was captured: one safetensors
    descriptor (the definition's single output) or a dict of them by output name.
    Absent when there is none (imported workloads): those are checked by running the
    reference instead. :meth:`expected_by_output` gives it by output name."""
    validation: Any = None
    """Validation results; ``replay`` writes its own under ``validation.replay``."""

    @property
    def kind(self) -> str | None:
        """The provenance's kind, or None where the receipt does not say."""
        return self.provenance.kind if self.provenance is not None else None

    @property
    def outside_domain(self) -> str | None:
        """Why the workload lies outside the published curated domain, or None (inside,
        or the receipt does not say)."""
        return self.provenance.outside_domain if self.provenance is not None else None

    @property
    def expected_descriptors(self) -> list[SafetensorsInput]:
        """Every descriptor ``expected_output`` holds, however it is spelled."""
        expected = self.expected_output
        if expected is None:
            return []
        return [expected] if isinstance(expected, SafetensorsInput) else list(expected.values())

    def expected_by_output(self, definition: Definition, file: str | Path,
                           line: int | None = None) -> dict[str, SafetensorsInput] | None:
        """``expected_output`` by output name (None when there is none).

        One descriptor stands for the definition's single output; for a definition with
        several outputs it is an error, as is a dict that names an output the definition
        lacks or leaves one out. Errors are ``DataError`` naming ``file``, ``line`` and
        the field.
        """
        expected = self.expected_output
        if expected is None:
            return None
        outputs = list(definition.outputs)
        if isinstance(expected, SafetensorsInput):
            if len(outputs) != 1:
                raise DataError(file, f"one descriptor, but {definition.name} has "
                                f"{len(outputs)} outputs ({', '.join(outputs)}): give a "
                                "dict by output name", line=line, field="expected_output")
            return {outputs[0]: expected}
        unknown = [name for name in expected if name not in definition.outputs]
        if unknown:
            raise DataError(file, f"{definition.name} has no output {unknown[0]!r} (outputs: "
                            f"{', '.join(outputs)})", line=line,
                            field=f"expected_output.{unknown[0]}")
        missing = [name for name in outputs if name not in expected]
        if missing:
            raise DataError(file, f"no descriptor for output {missing[0]!r} (a receipt "
                            "holds every output or none)", line=line, field="expected_output")
        return {name: expected[name] for name in outputs}

    def to_line(self, like: str | None = None) -> str:
        """The receipt as one line of ``captures.jsonl``, keys in the order read: in the
        JSON style of ``like`` (the line it was read from, see :func:`dumps_like`),
        compact otherwise."""
        return dumps_like(self.to_json(), like)


#: The JSON styles a line is recognised in: separators and whether non-ASCII is escaped
#: (compact, as this harness writes; and ``json.dumps``'s default).
JSON_STYLES = (((",", ":"), False), ((", ", ": "), True), ((",", ":"), True),
               ((", ", ": "), False))


def dumps_like(data: Any, like: str | None = None) -> str:
    """``data`` as one line of JSON in the style ``like`` is written in, when it is one of
    :data:`JSON_STYLES` (so a value read from ``like`` and written back unchanged is the
    same bytes); compact, non-ASCII as is, otherwise."""
    if like is not None:
        try:
            original = json.loads(like)
        except ValueError:
            original = None
        for separators, ascii_only in JSON_STYLES:
            if json.dumps(original, separators=separators, ensure_ascii=ascii_only) == like:
                return json.dumps(data, separators=separators, ensure_ascii=ascii_only)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------- loaders
M = TypeVar("M", bound=BaseModel)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = list(err["loc"])
    if loc[:1] == ["expected_output"] and loc[1:2] in ([ONE_DESCRIPTOR], [BY_OUTPUT]):
        del loc[1]  # the union's tag is no key of the file
    field = ".".join(str(p) for p in loc) or None
    return field, err["msg"].removeprefix("Value error, ")


def parse(model: type[M], data: Any, file: str | Path, line: int | None = None) -> M:
    """Validate ``data`` as ``model``; a failure becomes a one-line ``DataError``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, rule = _first_error(exc)
        raise DataError(file, rule, line=line, field=field) from None


def read_json(path: str | Path) -> Any:
    """The JSON value of one file; a missing or malformed file is a one-line
    :class:`DataError` (with the line of the syntax error)."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None


def load_json(model: type[M], path: str | Path) -> M:
    """Load one JSON file as ``model``."""
    return parse(model, read_json(path), path)


def parse_json_line(model: type[M], text: str, file: str | Path, line: int) -> M:
    """Parse and validate one JSONL line; errors name the file and the line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(file, f"malformed JSON: {exc.msg}", line=line) from None
    return parse(model, data, file, line=line)


def load_jsonl(model: type[M], path: str | Path) -> list[M]:
    """Load every non-empty line of a JSONL file as ``model`` (stops at the first bad line)."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    return [parse_json_line(model, line, path, number)
            for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
