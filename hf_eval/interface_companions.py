"""The interface audit's companion files: the project's counterparts of the published
audit's ``upstreams.json``, head rechecks, ``qsa-tie-edge-cases.json`` and
``preferred-solutions.json``, each a typed model with its loader.

What each holds and where its facts come from:

- ``upstreams.json``: the upstream libraries the pinned SGLang release pins (from its
  wheel's metadata, as recorded in the wheel reading) and what each provides per
  definition (the wheel reading's native kernels).
- ``sglang-head-recheck-diff.json``: how the pinned release differs from the SGLang commit
  the published audit cites, as far as the wheel shows it offline: per cited file, whether
  it exists in the wheel and where the cited function is defined there.
- ``upstream-head-recheck.json``: per upstream repository, what was and was not checked
  (no upstream head can be queried offline).
- ``qsa-tie-edge-cases.json``: the QSA index's lower-ID tie rule, run on inputs whose
  scores are all equal (:func:`qsa_tie_checks`).
- ``preferred-solutions.json``: per definition the H200 preferred solution (from the
  tasks), and the published B300 choice, cited as published, never as measured here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hf_eval.schema import load_json

NonEmpty = Annotated[str, Field(min_length=1)]
Commit = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]
DIR = "docs/interface-audit"
UPSTREAMS_PATH = f"{DIR}/upstreams.json"
SGLANG_RECHECK_PATH = f"{DIR}/sglang-head-recheck-diff.json"
UPSTREAM_RECHECK_PATH = f"{DIR}/upstream-head-recheck.json"
QSA_TIES_PATH = f"{DIR}/qsa-tie-edge-cases.json"
PREFERRED_PATH = f"{DIR}/preferred-solutions.json"
QSA_DEFINITION = "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"


class Model(BaseModel):
    """Base of the companion models: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


# ------------------------------------------------------------------------ upstreams
class Provision(Model):
    """What one library provides to one definition's engine path."""

    definition: NonEmpty
    """The definition's name."""
    provides: NonEmpty
    """The kernel or call the engine reaches in this library for that definition."""


class Upstream(Model):
    """One upstream library the pinned engine release uses."""

    package: NonEmpty
    """The package name on PyPI."""
    pin: NonEmpty
    """The requirement as the release pins it (from the wheel's METADATA), or as this
    project pins it where the release does not (then ``pinned_by`` says so)."""
    pinned_by: Literal["sglang-0.5.23 METADATA", "this project"]
    """Who pins it."""
    repository: NonEmpty
    """Its source repository (``owner/name`` on GitHub)."""
    published_audit_commit: Commit | None = None
    """The repository commit the published audit recorded (published, not checked here)."""
    definitions: list[Provision]
    """Per definition, what it provides (empty when it serves no audited boundary)."""


class UpstreamsFile(Model):
    """``upstreams.json``: the engine release and its upstream libraries."""

    engine: NonEmpty
    """The pinned engine release every entry refers to (``sglang==0.5.23``)."""
    source: NonEmpty
    """Where the pins and provisions were read."""
    libraries: Annotated[list[Upstream], Field(min_length=1)]
    """One entry per library."""


# -------------------------------------------------------------------- head rechecks
class CitedFile(Model):
    """One file the published audit cites, looked up in the pinned wheel."""

    path: NonEmpty
    """Path inside the wheel (``sglang/...``)."""
    in_wheel: bool
    """Whether the pinned wheel has the file."""
    cited_line: Annotated[int, Field(ge=1)] | None = None
    """The line the published link names (at the published audit commit), if any."""
    cited_call: NonEmpty
    """The published ``native_call`` cited there."""
    wheel_function: NonEmpty | None = None
    """The function or class of the call as defined in the wheel, when one could be named."""
    wheel_line: Annotated[int, Field(ge=1)] | None = None
    """Where that function or class starts in the wheel (its ``def`` or first decorator)."""
    status: Literal["same_line", "moved", "not_located"]
    """``same_line``: defined at the cited line in the wheel too; ``moved``: defined
    elsewhere in the same file; ``not_located``: no single function could be named (the
    link has no line, or the native call names several steps)."""


class SglangRecheck(Model):
    """``sglang-head-recheck-diff.json``: the published audit commit against the pinned
    release, as far as the wheel shows it offline."""

    base: Commit
    """The SGLang commit the published audit cites (``sglang_audit_commit``)."""
    head: NonEmpty
    """What it is compared with: the pinned release's wheel."""
    head_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """sha256 of that wheel."""
    checked: NonEmpty
    """What was checked."""
    not_checked: NonEmpty
    """What could not be checked offline."""
    files: Annotated[list[CitedFile], Field(min_length=1)]
    """One entry per cited (file, native call)."""


class RepositoryRecheck(Model):
    """One upstream repository: what was and was not checked."""

    repository: NonEmpty
    """``owner/name`` on GitHub."""
    published_audit_commit: Commit
    """The commit the published audit recorded for it."""
    pinned: NonEmpty
    """The release this project uses instead (a package requirement)."""
    head_checked: bool
    """Whether the repository's current head was compared (never offline)."""
    checked: NonEmpty
    """What was checked here."""


class UpstreamRecheck(Model):
    """``upstream-head-recheck.json``."""

    checked_on: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    """The day of the recheck."""
    network: Literal[False]
    """No network was used: upstream heads were not queried."""
    repositories: Annotated[list[RepositoryRecheck], Field(min_length=1)]
    """One entry per repository the published audit rechecked."""


# ------------------------------------------------------------------- QSA tie cases
class TieCheck(Model):
    """One capacity of the all-equal-scores check."""

    capacity: Annotated[int, Field(ge=1)]
    """Blocks the page table can address (pages x page_size)."""
    lengths: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]
    """``num_complete_blocks`` of each request of the batch."""
    all_scores_equal: Literal[True]
    """Every key is zero, so every block scores exactly the same."""
    reference_lower_ids_exact: bool
    """Whether the reference returned blocks 0..min(L, topk)-1 then -1, per request."""
    solution: NonEmpty
    """The solution run on the same inputs (the CPU preferred one)."""
    solution_lower_ids_exact: bool
    """Whether the solution returned exactly the same."""
    status: Literal["passed", "failed"]
    """``passed`` when both are exact."""

    @model_validator(mode="after")
    def _status(self) -> TieCheck:
        want = "passed" if self.reference_lower_ids_exact and self.solution_lower_ids_exact \
            else "failed"
        if self.status != want:
            raise ValueError(f"status must be {want!r} for these results")
        return self


class QsaTies(Model):
    """``qsa-tie-edge-cases.json``."""

    definition: Literal["qsa_index_topk_decode_qwen38_h4_d128_topk512_c4"]
    """The definition checked."""
    device: NonEmpty
    """Where it ran (``cpu``)."""
    checks: Annotated[list[TieCheck], Field(min_length=1)]
    """One per capacity."""
    status: Literal["passed", "failed"]
    """``passed`` when every check passed."""

    @model_validator(mode="after")
    def _status(self) -> QsaTies:
        want = "passed" if all(c.status == "passed" for c in self.checks) else "failed"
        if self.status != want:
            raise ValueError(f"status must be {want!r} for these checks")
        return self


# -------------------------------------------------------------- preferred solutions
class PublishedChoice(Model):
    """The published audit's preferred solution (published figures, not measured here)."""

    hardware: Literal["NVIDIA_B300"]
    """The hardware it was chosen on, as published."""
    solution: NonEmpty
    """Its solution name, as published."""


class Preferred(Model):
    """One definition's preferred solution on the H200."""

    definition: NonEmpty
    """The definition's name."""
    solution: NonEmpty
    """The task's ``preferred.h200`` solution."""
    path: NonEmpty
    """Its file under ``solutions/``."""
    evidence: NonEmpty
    """The task's evidence for it (H200 measurements made by this project)."""
    published: PublishedChoice
    """The published B300 choice for the same definition."""


class PreferredFile(Model):
    """``preferred-solutions.json``."""

    hardware: Literal["NVIDIA H200"]
    """The hardware the preferred solutions were measured on."""
    source: NonEmpty
    """Where the entries come from (the tasks' ``preferred.h200``)."""
    definitions: Annotated[list[Preferred], Field(min_length=1)]
    """One entry per definition with an H200 choice."""


def load_companion(model: type[Model], path: str | Path) -> Model:
    """Load one companion file; a problem is a one-line ``DataError``."""
    return load_json(model, path)


# ---------------------------------------------------------------- the tie checks
def _exact(out: object, want: object) -> bool:
    """Whether a run's block IDs (the tensor or the first of a tuple) equal ``want``."""
    import torch

    got = out[0] if isinstance(out, (tuple, list)) else out
    return bool(torch.equal(got.to(torch.int32).cpu(), want))


def qsa_tie_checks(root: str | Path, solution: str,
                   capacities: tuple[tuple[int, tuple[int, ...]], ...]) -> QsaTies:
    """Run the reference and ``solution`` on all-zero keys (every score equal) for each
    (capacity, lengths); exact means blocks ``0..min(L, topk)-1`` then ``-1``."""
    import torch

    from hf_eval.dataset import open_dataset
    from hf_eval.sources import compile_reference, load_entry

    ds = open_dataset(root)
    definition = ds.definitions[QSA_DEFINITION].value
    axes = definition.axes
    page, dim, heads = axes["page_size"].value, axes["D"].value, axes["H"].value
    topk = axes["topk"].value
    reference = compile_reference(definition)
    entry = load_entry(ds.solutions[solution].value)
    checks = []
    for capacity, lengths in capacities:
        pages = capacity // page
        batch = len(lengths)
        q = torch.randn(batch, heads, dim, generator=torch.Generator().manual_seed(0))
        args = [q.to(torch.bfloat16), torch.zeros(pages, page, dim, dtype=torch.bfloat16),
                torch.arange(pages, dtype=torch.int32).repeat(batch, 1),
                torch.tensor(lengths, dtype=torch.int32)]
        want = torch.full((batch, topk), -1, dtype=torch.int32)
        for b, n in enumerate(lengths):
            want[b, :min(n, topk)] = torch.arange(min(n, topk), dtype=torch.int32)

        ref_ok, sol_ok = _exact(reference(*args), want), _exact(entry.run(*args), want)
        checks.append(TieCheck(capacity=capacity, lengths=list(lengths), all_scores_equal=True,
                               reference_lower_ids_exact=ref_ok, solution=solution,
                               solution_lower_ids_exact=sol_ok,
                               status="passed" if ref_ok and sol_ok else "failed"))
    status = "passed" if all(c.status == "passed" for c in checks) else "failed"
    return QsaTies(definition=QSA_DEFINITION, device="cpu", checks=checks, status=status)
