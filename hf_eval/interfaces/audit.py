"""The SGLang interface audit: where each definition sits in the serving engine, as data.

Two files, both read and checked here:

- ``docs/interface-audit/interfaces.json`` is the published audit, in the published
  dataset's own schema: the audit date, the SGLang commits the captures and the audit refer
  to, ``all_drop_in``, ``full_engine_substitution_tested``, ``counts`` by boundary class,
  and per definition its ``inputs``, ``integration_verified``, ``boundary`` class,
  ``native_call``, ``source``, ``adaptation`` and ``next_step``. Keys this project does not
  know are kept and written back unchanged (:class:`~hf_eval.data.schema.Kept`), so a published
  file loads and dumps to the same bytes. The project adds, per definition,
  ``wheel_evidence`` (what its reading of the pinned SGLang wheel shows, each with file,
  function and line) and, where that reading contradicts a published field,
  ``wheel_disagreement``.
- ``docs/interface-audit/sglang-0.5.23.json`` (named by the audit's ``wheel_reading``) is
  the project's own reading of the pinned wheel: per definition the call sites, native
  kernels, adapters, integration work, engine-path baseline and evidence.

Three layers of checking, each where it can run:
- the models below: shape and internal consistency (``counts`` is the tally of
  ``boundary``, ``all_drop_in`` is whether every boundary is drop-in, one entry per
  definition, the source links point at the audit commit);
- ``hf-eval check`` (``hf_eval.checker``): one entry per definition of the dataset in both
  files, ``inputs`` are the definition's inputs, each definition's tags point to its
  entry, named baselines exist;
- :func:`verify_against_wheel`: every cited file exists in the pinned wheel, the cited
  function or class is defined there, and the cited line lies inside it (the test suite
  runs it against the wheel ``.ci/setup --test`` downloads).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Kept, read_json, stays_inside

#: Where the audit lives, relative to the dataset root.
AUDIT_PATH = "docs/interface-audit/interfaces.json"
#: The project's reading of the pinned wheel (the audit's ``wheel_reading``).
READING_PATH = "docs/interface-audit/sglang-0.5.23.json"
#: The README generated from both (``python -m hf_eval interfaces render``).
README_PATH = "docs/interface-audit/README.md"
#: Where ``.ci/setup --test`` puts the pinned wheel (git-ignored: ``/.cache/``).
WHEEL_DIR = ".cache/wheels"
#: The tag every definition carries to point at its entry: ``TAG_PREFIX + name``.
TAG_PREFIX = f"interface:{AUDIT_PATH}#"
#: The tag a definition carries instead when the audit does not cover its engine call (one
#: added since the audit, or taken from no engine): ``hf-eval check`` then requires no
#: entry for it in either file, and refuses one.
NOT_AUDITED_TAG = "interface:not-audited"

NonEmpty = Annotated[str, Field(min_length=1)]


def pointer_tag(definition: str) -> str:
    """The tag that points a definition at its entry in the audit."""
    return f"{TAG_PREFIX}{definition}"


class Model(BaseModel):
    """Base of every audit model: unknown keys are errors, so a typo cannot hide a field."""

    model_config = ConfigDict(extra="forbid")


class Engine(Model):
    """The pinned engine release every call site refers to."""

    name: Literal["sglang"]
    """The serving engine (only SGLang is audited)."""
    version: NonEmpty
    """Release version, e.g. ``0.5.23``; call sites are valid at this release only."""
    wheel: NonEmpty
    """File name of the wheel the call sites were read from (``pip download --no-deps``)."""
    wheel_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """sha256 of that wheel, so a test against another build fails instead of drifting."""
    kernel_package: NonEmpty
    """The engine's CUDA kernel package and version (``sglang-kernel==…``)."""
    pinned_dependencies: list[NonEmpty] = []
    """Other kernel libraries the release pins (from the wheel's METADATA): the native
    kernels of several boundaries live there rather than in ``sgl_kernel``."""


class EngineModel(Model):
    """Which engine model the definition's source model maps to."""

    named: NonEmpty
    """The model the definition names (its ``model:`` tag), e.g. ``Qwen-Image 2.1 turbo``."""
    in_release: bool
    """Whether the release implements that model under a recognisable name; when not, the
    entry records the nearest engine path and every difference in ``differences``."""
    engine_path: NonEmpty
    """The engine's model or pipeline class that holds the boundary (or the nearest one)."""
    differences: list[NonEmpty] = []
    """Every known difference between the definition's model and ``engine_path``."""

    @model_validator(mode="after")
    def _absent_model_lists_differences(self) -> EngineModel:
        if not self.in_release and not self.differences:
            raise ValueError("a model absent from the release needs its differences from "
                             "the nearest engine path")
        return self


class CallSite(Model):
    """One place in the engine's source on the path from the model to the native kernel."""

    file: NonEmpty
    """Path inside the wheel, e.g. ``sglang/srt/models/qwen3_next.py``."""
    function: NonEmpty
    """Qualified name of the function or class defined in ``file`` that holds ``line``
    (``Class.method``; nested functions joined with dots)."""
    line: Annotated[int, Field(ge=1)]
    """A line inside ``function`` (its ``def`` line or the call itself) at the release."""
    role: NonEmpty
    """What happens there, in one sentence (why an integrator looks at this line)."""
    boundary: bool = False
    """True for the one call site a candidate kernel would replace (the boundary itself);
    the others lead to it or show where its inputs are prepared."""

    @field_validator("file")
    @classmethod
    def _inside_wheel(cls, file: str) -> str:
        pure = PurePosixPath(file)
        if not stays_inside(file):
            raise ValueError("must be a relative path inside the wheel (no '/', '..' or '\\')")
        if pure.parts[0] != "sglang" or pure.suffix != ".py":
            raise ValueError("must be a Python file of the sglang package (sglang/....py)")
        return file


Hardware = Literal["yes", "no", "unverified"]


class NativeKernel(Model):
    """A compiled or JIT kernel (or library call) that the call sites end in."""

    name: NonEmpty
    """The callable the engine invokes, e.g. ``sgl_kernel.flash_attn.flash_attn_varlen_func``."""
    package: NonEmpty
    """The package that ships it: ``sglang-kernel``, ``sgl-flash-mla``, ``flashinfer``,
    ``torch``, ``sglang`` (Triton/TileLang/JIT sources inside the wheel), …"""
    sm90: Hardware
    """Whether this kernel runs on sm_90 (H200) at this release: ``yes`` from the engine's
    own gating, ``no`` when the engine gates it to other architectures, ``unverified``
    when that could not be read offline."""
    note: str | None = None
    """Gating, selection or build detail an integrator needs (one or two sentences)."""


AdapterKind = Literal["flatten", "pad", "layout", "page_remap", "scale", "mask", "gather",
                      "split", "dtype", "fixed_constant", "output_order", "fusion", "other"]


class Adapter(Model):
    """One transformation between the engine's arguments and the definition's inputs
    (or the definition's outputs and what the engine consumes)."""

    name: NonEmpty
    """Short identifier, unique within the entry (``snake_case``)."""
    kind: AdapterKind
    """The issue's categories: flattened leading dims, padding, layout, page remapping,
    scale conventions, dropped masks or fixed scales, plus gathers, output order, fusion."""
    does: NonEmpty
    """What it does, precisely enough to implement it."""
    changes_values: bool
    """True when the definition's inputs are not a re-view of the engine's bytes: values
    are recomputed, rounded, dropped or added."""


EnginePath = Literal["torch", "sglang_triton", "sglang_jit", "flashinfer", "fa3", "fa4",
                     "sgl_kernel", "flashmla", "deepgemm", "tilelang", "natten"]
#: What each ``EngineBaseline.through`` value means (rendered into the README).
ENGINE_PATHS: dict[str, str] = {
    "torch": "PyTorch's own kernels (cuBLAS, cuDNN, SDPA, compiled FlexAttention)",
    "sglang_triton": "Triton sources inside the sglang wheel (vendorable)",
    "sglang_jit": "CUDA sources inside the sglang wheel, compiled at run time (nvcc)",
    "flashinfer": "flashinfer-python (JIT; CuTe DSL for some kernels)",
    "fa3": "FlashAttention-3 from sglang-kernel's flash_ops (or the kernels community repo)",
    "fa4": "flash-attn-4 (CuTe DSL)",
    "sgl_kernel": "sglang-kernel's compiled CUDA ops other than FA3",
    "flashmla": "sgl-flash-mla (compiled; legacy and current kernel sets)",
    "deepgemm": "sgl-deep-gemm (JIT CUDA)",
    "tilelang": "TileLang JIT kernels",
    "natten": "NATTEN (optional, not pinned by the release)",
}


class EngineBaseline(Model):
    """A solution that calls the engine's own code path, kept apart from preferred ones.

    Recorded as data so the integrator and the device audit see, per boundary, whether the
    engine's path can be run on the H200 at all, through which library, what must be staged
    for it, and why a boundary has no runnable baseline.
    """

    runs_on_sm90: Hardware
    """Whether the engine path of this boundary runs on sm_90 (H200) hardware."""
    through: Annotated[list[EnginePath], Field(min_length=1)]
    """What the engine path runs through on sm_90 (``ENGINE_PATHS``): the engine's default
    selection first, then a backend it selects by configuration where ``solution``
    reproduces that one instead; for a boundary without an sm_90 path, what it runs
    through where it does run."""
    needs: list[NonEmpty] = []
    """Each thing the engine's default path needs beyond the H200 as this project runs it
    (torch 2.11.0+cu130, triton 3.6.0, nvcc 13.0): a package to stage with its version, or
    another architecture. Empty when nothing more is needed."""
    solution: str | None = None
    """Name of the solution under ``solutions/`` that reproduces the engine path, or None."""
    intended_solution: str | None = None
    """Name reserved for a baseline not written yet (to be set as the task's
    ``engine_baseline`` once it exists and is audited)."""
    why_not: str | None = None
    """Why there is no runnable engine-path solution (required exactly when ``solution``
    is None)."""
    note: NonEmpty
    """How the baseline reproduces the engine path, and how its behaviour differs from the
    definition where it does."""

    @model_validator(mode="after")
    def _consistent(self) -> EngineBaseline:
        if self.solution is not None and self.intended_solution is not None:
            raise ValueError("give either solution (it exists) or intended_solution, not both")
        if self.runs_on_sm90 == "no" and not self.needs:
            raise ValueError("an engine path that does not run on sm_90 must say what it needs")
        if self.solution is None and not self.why_not:
            raise ValueError("an engine baseline without a solution must say why_not")
        if self.solution is not None and self.why_not is not None:
            raise ValueError("why_not is for entries without a solution; this one has "
                             f"{self.solution!r}")
        return self


class Evidence(Model):
    """One piece of validation evidence behind the entry."""

    kind: Literal["read", "checked", "not_established"]
    """``read``: read in the pinned wheel's source; ``checked``: verified by this project's
    tooling (tests, samples); ``not_established``: could not be settled offline."""
    statement: NonEmpty
    """The fact, with enough detail to re-check it."""


class WheelEntry(Model):
    """The engine boundary of one definition, as read in the pinned wheel."""

    definition: NonEmpty
    """The definition's ``name``."""
    engine_model: EngineModel
    """Which engine model holds the boundary."""
    call_sites: Annotated[list[CallSite], Field(min_length=1)]
    """From the model's layer down to the last engine-side call, in call order."""
    native_kernels: Annotated[list[NativeKernel], Field(min_length=1)]
    """Every kernel the call sites can reach (all selectable backends)."""
    adapters: list[Adapter]
    """Every transformation between engine arguments and definition inputs/outputs."""
    integration_work: Annotated[list[NonEmpty], Field(min_length=1)]
    """What remains to wire a definition-conforming kernel into the engine."""
    engine_baseline: EngineBaseline
    """The engine-path baseline for this definition."""
    evidence: Annotated[list[Evidence], Field(min_length=1)]
    """The evidence for the above, including what could not be established offline."""

    @model_validator(mode="after")
    def _consistent(self) -> WheelEntry:
        boundaries = sum(site.boundary for site in self.call_sites)
        if boundaries != 1:
            raise ValueError(f"exactly one call site must be the boundary, found {boundaries}")
        names = [a.name for a in self.adapters]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate adapter names {duplicates}")
        return self


class Simplification(Model):
    """A simplification the audit found feasible: where the definition could be narrowed
    or the engine's call simplified, and what it would cost."""

    title: NonEmpty
    """One line."""
    definitions: Annotated[list[NonEmpty], Field(min_length=1)]
    """The definitions it concerns."""
    text: NonEmpty
    """The account, in this project's words."""


class WheelReading(Model):
    """The project's reading of the pinned wheel (``sglang-0.5.23.json``): the pinned
    engine, one entry per definition, the simplifications."""

    engine: Engine
    """The release every call site refers to."""
    entries: Annotated[list[WheelEntry], Field(min_length=1)]
    """One entry per definition, sorted by name."""
    simplifications: list[Simplification] = []
    """Feasible simplifications (rendered into the README)."""

    @model_validator(mode="after")
    def _unique_sorted(self) -> WheelReading:
        names = [e.definition for e in self.entries]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"more than one entry for {duplicates}")
        if names != sorted(names):
            raise ValueError("entries must be sorted by definition name (stable diffs)")
        known = set(names)
        for s in self.simplifications:
            unknown = sorted(set(s.definitions) - known)
            if unknown:
                raise ValueError(f"simplification {s.title!r} names definitions without an "
                                 f"entry: {unknown}")
        return self

    def entry(self, definition: str) -> WheelEntry | None:
        """The entry of one definition, or None."""
        return next((e for e in self.entries if e.definition == definition), None)


# ------------------------------------------------------------- the published audit
#: The published boundary classes, from least to most integration work:
#: ``reshaped_tensor_operands`` (the engine's operands up to a reshape of leading
#: dimensions), ``specialized_leaf_operands`` (the operands of one engine leaf call, with
#: fixed configuration bound), ``structural_adapter_required`` (the definition composes,
#: gathers or re-lays out engine calls or state, so an adapter of structure is needed).
BoundaryClass = Literal["reshaped_tensor_operands", "specialized_leaf_operands",
                        "structural_adapter_required"]
#: The classes this project counts as drop-in for ``all_drop_in``: a candidate takes the
#: engine's operands without a structural adapter (a reshape or bound configuration only).
DROP_IN_CLASSES: frozenset[str] = frozenset({"reshaped_tensor_operands",
                                             "specialized_leaf_operands"})
#: The repository the published ``source`` links point into.
SOURCE_REPO = "https://github.com/sgl-project/sglang/blob/"
_SOURCE = re.compile(r"^https://github\.com/sgl-project/sglang/blob/(?P<commit>[0-9a-f]{40})/"
                     r"python/(?P<path>sglang/[A-Za-z0-9_./-]+\.py)(?:#L(?P<line>[1-9][0-9]*))?$")
Commit = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]


def parse_source(url: str) -> tuple[str, str, int | None]:
    """(commit, path inside the wheel, line or None) of a published ``source`` link."""
    match = _SOURCE.match(url)
    if match is None:
        raise ValueError(f"source {url!r} is not a link to a Python file of "
                         f"{SOURCE_REPO}<commit>/python/sglang/ (with an optional #L<line>)")
    line = match["line"]
    return match["commit"], match["path"], int(line) if line else None


class WheelCitation(Model):
    """One finding of the project's reading of the pinned wheel, with its place."""

    file: NonEmpty
    """Path inside the wheel, e.g. ``sglang/srt/models/deepseek_v4.py``."""
    function: NonEmpty
    """Qualified name of the function or class defined in ``file`` that holds ``line``."""
    line: Annotated[int, Field(ge=1)]
    """A line inside ``function`` at the pinned release."""
    statement: NonEmpty
    """What the wheel shows there, in this project's words."""

    _inside_wheel = field_validator("file")(CallSite._inside_wheel.__func__)


class WheelDisagreement(WheelCitation):
    """A place where the pinned wheel contradicts a published field of the entry."""

    field: NonEmpty
    """The published field the wheel contradicts (a key of the same entry, which is kept
    as published)."""


class PublishedEntry(Kept):
    """One definition's boundary in the published audit (``definitions[]``)."""

    definition: NonEmpty
    """The definition's ``name``."""
    inputs: Annotated[list[NonEmpty], Field(min_length=1)]
    """The definition's input names, in the definition's order."""
    integration_verified: bool
    """Whether a candidate has been run in the engine at this boundary (none has)."""
    boundary: BoundaryClass
    """The boundary class (:data:`BoundaryClass`)."""
    native_call: NonEmpty
    """The engine call the definition stands for, as code."""
    source: NonEmpty
    """Link to that call in SGLang's repository at ``sglang_audit_commit``."""
    adaptation: NonEmpty
    """What separates the engine's call from the definition's inputs and outputs."""
    next_step: NonEmpty
    """The integration or capture work that would close that gap."""
    capture_recipe_note: NonEmpty | None = None
    """A note on how the capture encoded a quantisation recipe (scale groups, layouts),
    where the definition does not carry it."""
    wheel_evidence: list[WheelCitation] | None = None
    """This project's findings in the pinned wheel that support (or add to) the published
    classification, each with file, function and line."""
    wheel_disagreement: list[WheelDisagreement] | None = None
    """Where the pinned wheel contradicts a published field: the field and the evidence.
    The published field is kept unchanged."""

    @field_validator("source")
    @classmethod
    def _source_link(cls, url: str) -> str:
        parse_source(url)
        return url

    @model_validator(mode="after")
    def _disagreements_name_fields(self) -> PublishedEntry:
        for d in self.wheel_disagreement or []:
            if d.field not in self._order and d.field not in type(self).model_fields:
                raise ValueError(f"wheel_disagreement names {d.field!r}, which is not a field "
                                 "of this entry")
        return self


class InterfaceAudit(Kept):
    """The published audit file (``interfaces.json``), read and written unchanged."""

    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    """The day the audit was made (``YYYY-MM-DD``)."""
    sglang_capture_commit: Commit
    """The SGLang commit the workloads were captured with."""
    sglang_audit_commit: Commit
    """The SGLang commit the ``source`` links point into."""
    all_drop_in: bool
    """Whether every boundary is drop-in (class in :data:`DROP_IN_CLASSES`)."""
    full_engine_substitution_tested: bool
    """Whether candidates were run in the full engine in place of its kernels."""
    counts: dict[BoundaryClass, Annotated[int, Field(ge=0)]]
    """Number of definitions per boundary class."""
    definitions: Annotated[list[PublishedEntry], Field(min_length=1)]
    """One entry per definition."""
    snapshot_limit: NonEmpty | None = None
    """What the captured tensors cannot show about the engine's memory (strides, aliasing)."""
    wheel_reading: NonEmpty | None = None
    """Path, relative to the dataset root, of the project's reading of the pinned wheel
    (:class:`WheelReading`)."""

    @model_validator(mode="after")
    def _consistent(self) -> InterfaceAudit:
        names = [e.definition for e in self.definitions]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"more than one entry for {duplicates}")
        tally = {c: sum(e.boundary == c for e in self.definitions)
                 for c in sorted({e.boundary for e in self.definitions})}
        listed = {c: n for c, n in self.counts.items() if n}
        if listed != tally:
            raise ValueError(f"counts {dict(sorted(self.counts.items()))} are not the tally of "
                             f"the entries' boundary classes {tally}")
        drop_in = all(e.boundary in DROP_IN_CLASSES for e in self.definitions)
        if self.all_drop_in != drop_in:
            raise ValueError(f"all_drop_in is {str(self.all_drop_in).lower()}, but "
                             f"{'every' if drop_in else 'not every'} boundary is drop-in")
        for e in self.definitions:
            commit = parse_source(e.source)[0]
            if commit != self.sglang_audit_commit:
                raise ValueError(f"{e.definition}: source points at {commit}, not at "
                                 f"sglang_audit_commit {self.sglang_audit_commit}")
        return self

    def entry(self, definition: str) -> PublishedEntry | None:
        """The entry of one definition, or None."""
        return next((e for e in self.definitions if e.definition == definition), None)


# ----------------------------------------------------------------------- loading
def _load(model: type[Any], path: str | Path, key: str) -> Any:
    """Load and validate one file; every problem is a one-line ``DataError``.

    A field inside an entry is named by the entry's definition (``<key>[<name>].…``)
    rather than its list index, so the message says which boundary to fix.
    """
    data = read_json(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        if len(loc) >= 2 and loc[0] == key and loc[1].isdigit():
            try:
                loc[:2] = [f"{key}[{data[key][int(loc[1])]['definition']}]"]
            except (KeyError, IndexError, TypeError):
                pass
        raise DataError(path, err["msg"].removeprefix("Value error, "),
                        field=".".join(loc) or None) from None


def load_audit(path: str | Path) -> InterfaceAudit:
    """Load and validate the published audit (``interfaces.json``)."""
    return _load(InterfaceAudit, path, "definitions")


def load_reading(path: str | Path) -> WheelReading:
    """Load and validate the project's reading of the pinned wheel."""
    return _load(WheelReading, path, "entries")


def reading_path(root: str | Path, audit: InterfaceAudit) -> Path:
    """Where the audit's wheel reading lives (its ``wheel_reading``, else the default)."""
    return Path(root) / (audit.wheel_reading or READING_PATH)


def coverage_problems(have: Iterable[str], definitions: Iterable[str],
                      where: str = AUDIT_PATH, field: str = "definitions") -> list[DataError]:
    """One entry per definition: missing and unknown entries, each as one error."""
    wanted, present = set(definitions), set(have)
    problems = [DataError(where, f"no entry for definition {name!r}", field=field)
                for name in sorted(wanted - present)]
    problems += [DataError(where, f"entry for unknown definition {name!r}", field=field)
                 for name in sorted(present - wanted)]
    return problems


# ------------------------------------------------------------------- the pinned wheel
def find_wheel(root: str | Path, reading: WheelReading) -> Path:
    """The pinned wheel under ``<root>/.cache/wheels``; a clear error when it is absent."""
    path = Path(root) / WHEEL_DIR / reading.engine.wheel
    if not path.is_file():
        raise DataError(path, f"the pinned wheel is missing: run `.ci/setup --test`, or "
                        f"`pip download --no-deps {reading.engine.name}=={reading.engine.version} "
                        f"-d {WHEEL_DIR}`")
    return path


def _definitions_in(source: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first line incl. decorators, last line) of every def and class."""
    spans: dict[str, tuple[int, int]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                # a name defined twice (e.g. under if/else) keeps its widest span
                old = spans.get(name)
                span = (start, child.end_lineno or child.lineno)
                spans[name] = span if old is None else (min(old[0], span[0]),
                                                        max(old[1], span[1]))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(source), "")
    return spans


Cited = tuple[str, str, str, int]  # (where, file, function, line)


def citations(reading: WheelReading, audit: InterfaceAudit | None = None) -> list[Cited]:
    """Every file-function-line citation of both files, each with where it is cited."""
    cited: list[Cited] = []
    for entry in reading.entries:
        cited += [(f"{entry.definition}: call_sites.{i}", s.file, s.function, s.line)
                  for i, s in enumerate(entry.call_sites)]
    for e in audit.definitions if audit is not None else []:
        for key in ("wheel_evidence", "wheel_disagreement"):
            cited += [(f"{e.definition}: {key}.{i}", c.file, c.function, c.line)
                      for i, c in enumerate(getattr(e, key) or [])]
    return cited


def verify_against_wheel(reading: WheelReading, wheel: str | Path,
                         audit: InterfaceAudit | None = None) -> list[str]:
    """Every cited file, function and line, checked in the wheel; one line per problem.

    The wheel's sha256 must be the recorded one. A citation passes when its file is in
    the wheel, its ``function`` is a (qualified) def or class of that file, and its
    ``line`` lies within that definition (decorators included). With ``audit``, its
    ``wheel_evidence`` and ``wheel_disagreement`` are checked too, and every published
    ``source`` path must be a file of the wheel (its line is at another commit, so only
    its range is checked: within the file's length).
    """
    wheel = Path(wheel)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != reading.engine.wheel_sha256:
        return [f"{wheel}: sha256 {digest} is not the recorded {reading.engine.wheel_sha256}"]
    problems: list[str] = []
    parsed: dict[str, dict[str, tuple[int, int]] | None] = {}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for where, file, function, line in citations(reading, audit):
            if file not in parsed:
                parsed[file] = (_definitions_in(archive.read(file).decode())
                                if file in names else None)
            spans = parsed[file]
            if spans is None:
                problems.append(f"{where}: {file} is not in {wheel.name}")
                continue
            span = spans.get(function)
            if span is None:
                problems.append(f"{where}: {function} is not defined in {file}")
            elif not span[0] <= line <= span[1]:
                problems.append(f"{where}: line {line} is outside {function} "
                                f"({file}:{span[0]}-{span[1]})")
        for e in audit.definitions if audit is not None else []:
            _, path, line = parse_source(e.source)
            if path not in names:
                problems.append(f"{e.definition}: source: {path} is not in {wheel.name}")
                continue
            length = archive.read(path).decode().count("\n") + 1
            if line is not None and line > length:
                problems.append(f"{e.definition}: source: line {line} is past the end of "
                                f"{path} ({length} lines)")
    return problems


def dump(model: InterfaceAudit | WheelReading) -> str:
    """The canonical text of either file (two-space JSON, trailing newline). The published
    audit keeps its keys in the order read, unknown ones included, so a file loaded and
    dumped unchanged is the same bytes."""
    data = (model.to_json() if isinstance(model, Kept)
            else model.model_dump(mode="json", exclude_none=True))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
