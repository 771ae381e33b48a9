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

from hf_eval.data.schema import load_json

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

    from hf_eval.data.sources import compile_reference, load_entry
    from hf_eval.dataset import open_dataset

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


# ------------------------------------------------------------------- building them
#: The published audit's preferred solution per definition (NVIDIA_B300, as published;
#: solution names only, no figure of it is measured here).
PUBLISHED_B300 = {
    "prefix_cached_block_causal_h32_d128": "fa4_prefix_h32_d128",
    "prefix_cached_block_causal_h32_d128_prefix0": "fa4_prefix0_h32_d128",
    "noncausal_dense_attention_h32_d128": "fa4_noncausal_h32_d128",
    "noncausal_dense_attention_h32_d64": "fa4_noncausal_h32_d64",
    "gdn_decode_qk4_v8_d128_k_last": "flashinfer_gdn_decode",
    "gdn_prefill_qk4_v8_d128_k_last": "flashinfer_gdn_prefill",
    "dense_gemm_bf16_nt_n12288_k4096": "deepgemm_bf16_n12288_k4096",
    "dense_gemm_bf16_nt_n4096_k12288": "deepgemm_bf16_n4096_k12288",
    "dense_gemm_bf16_nt_n4096_k4096": "hybrid_bf16_n4096_k4096",
    "grouped_gemm_fp8_fp4_e384_n4608_k5120_g32": "deepgemm_n4608_k5120",
    "grouped_gemm_fp8_fp4_e384_n5120_k2304_g32": "deepgemm_n5120_k2304",
    "mixed_mla_decode_deepseek41_h64_d512_k8128_k4512": "flashmla_v41",
    "moe_router_gemm_topk_deepseek41_d5120_e384_topk6": "fused_router",
    "neighborhood_attention_3d_h16_d64_kt3_ky7_kx7": "natten_blackwell_h16_3x7x7",
    "neighborhood_attention_3d_h32_d64_kt3_ky7_kx7": "natten_blackwell_h32_3x7x7",
    "neighborhood_attention_3d_h4_d64_kt11_ky11_kx11": "natten_blackwell_h4_11x11x11",
    "neighborhood_attention_3d_h8_d64_kt3_ky5_kx5": "natten_blackwell_h8_3x5x5",
    "qsa_index_topk_decode_qwen38_h4_d128_topk512_c4": "sglang_tilelang_index",
    "qsa_sparse_gqa_decode_qwen38_h24_kv2_d256_topk512_c4": "trtllm_sparse_gqa",
    "sparse_mla_prefill_h64_d512_k128": "flashmla_prefill_k128",
    "sparse_mla_prefill_h64_d512_k640": "flashmla_prefill_k640",
}
#: Package -> (GitHub repository, the commit the published audit recorded for it).
REPOSITORIES: dict[str, tuple[str, str | None]] = {
    "sglang-kernel": ("sgl-project/sglang", None),
    "sgl-flash-mla": ("deepseek-ai/FlashMLA", "0f11e178da1f67becb087a324b400854931ec3e3"),
    "sgl-deep-gemm": ("deepseek-ai/DeepGEMM", "1fc9c66975ee322d628b3288534ca0e9ce12a64d"),
    "flashinfer-python": ("flashinfer-ai/flashinfer",
                          "f64b4ba8762ded12a4f4b9a2092974c9a395e7ca"),
    "tilelang": ("tile-ai/tilelang", None),
    "flash-attn-4": ("Dao-AILab/flash-attention", "e7a6402a9ff099de5eb628ce207a88a3f0aa5378"),
    "torch": ("pytorch/pytorch", None),
    "natten": ("SHI-Labs/NATTEN", "39375ea1d2f3b1bb284315fa5f79f6ecbebb6382"),
}
#: The tie checks' (capacity, lengths): small, around topk, and a full 65536-block table.
TIE_CASES = ((64, (0, 1, 32, 64)), (640, (0, 511, 512, 513, 640)),
             (65536, (0, 511, 512, 513, 65536)))
TIE_SOLUTION = "torch_gather_topk_qsa_index_h4"


def package_key(requirement: str) -> str:
    """``flashinfer_python[cu13]==0.7.2`` -> ``flashinfer-python``: the bare, normalised
    package name of a requirement (or of a wheel reading's ``package`` text)."""
    import re

    name = re.split(r"[\s\[=<>!~(]", requirement.strip(), maxsplit=1)[0]
    return name.lower().replace("_", "-")


def build_upstreams(reading: object) -> UpstreamsFile:
    """The release's pinned libraries (and NATTEN, which it uses unpinned) and what each
    provides per definition, from the wheel reading."""
    engine = reading.engine
    libraries = []
    for pin in [engine.kernel_package, *engine.pinned_dependencies, "natten"]:
        key = package_key(pin)
        provides = [Provision(definition=e.definition, provides=k.name)
                    for e in reading.entries for k in e.native_kernels
                    if package_key(k.package) == key]
        repository, commit = REPOSITORIES[key]
        ours = key == "natten"
        libraries.append(Upstream(
            package=key, pin="natten (optional; not pinned by the release)" if ours else pin,
            pinned_by="this project" if ours else "sglang-0.5.23 METADATA",
            repository=repository, published_audit_commit=commit, definitions=provides))
    return UpstreamsFile(
        engine=f"{engine.name}=={engine.version}",
        source="the wheel reading (docs/interface-audit/sglang-0.5.23.json): "
               "engine.kernel_package, engine.pinned_dependencies and each entry's "
               "native_kernels", libraries=libraries)


def build_sglang_recheck(audit: object, reading: object, wheel: Path) -> SglangRecheck:
    """Each published source file looked up in the pinned wheel."""
    import zipfile

    from hf_eval.interfaces.audit import _definitions_in, parse_source

    files: list[CitedFile] = []
    seen: set[tuple[str, str]] = set()
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for e in audit.definitions:
            _, path, line = parse_source(e.source)
            if (path, e.native_call) in seen:
                continue
            seen.add((path, e.native_call))
            function = start = None
            if path in names and line is not None:
                spans = _definitions_in(archive.read(path).decode())
                head = e.native_call.split("(")[0].split(":")[0].split(" ")[0].strip()
                found: list[str] = []
                for name in (head, head.split(".")[-1]):
                    found = [q for q in spans if q == name or q.endswith("." + name)]
                    if found:
                        break
                if len(found) == 1:
                    function, start = found[0], spans[found[0]][0]
            status = ("not_located" if start is None else
                      "same_line" if start == line else "moved")
            files.append(CitedFile(path=path, in_wheel=path in names, cited_line=line,
                                   cited_call=e.native_call, wheel_function=function,
                                   wheel_line=start, status=status))
    return SglangRecheck(
        base=audit.sglang_audit_commit, head=reading.engine.wheel,
        head_sha256=reading.engine.wheel_sha256,
        checked="Every file the published source links name, looked up in the pinned wheel; "
                "where the link names a line and the native call names one function, where "
                "that function is defined in the wheel. Every wheel_evidence citation is "
                "checked by `python -m hf_eval interfaces verify`.",
        not_checked="The SGLang repository's history and current head (no network): which "
                    "commits separate the published audit commit from the release, and "
                    "whether the head has moved since. A moved line shows that a file "
                    "changed, not how.",
        files=files)


def build_upstream_recheck(audit: object, upstreams: UpstreamsFile) -> UpstreamRecheck:
    """What was and was not checked per repository the published audit rechecked."""
    repositories = [RepositoryRecheck(
        repository=u.repository, published_audit_commit=u.published_audit_commit,
        pinned=u.pin, head_checked=False,
        checked="Nothing at the repository: its head was not queried (no network). "
                + ("The release used here is the one the pinned SGLang wheel names"
                   if u.pinned_by != "this project" else
                   "The release does not pin it; the versions this project's solutions use "
                   "are in their dependencies")
                + "; what it provides per definition is in upstreams.json.")
        for u in upstreams.libraries if u.published_audit_commit]
    repositories.append(RepositoryRecheck(
        repository="sgl-project/sglang", published_audit_commit=audit.sglang_audit_commit,
        pinned=upstreams.engine, head_checked=False,
        checked="The pinned release's wheel against the files the published audit cites: "
                "sglang-head-recheck-diff.json."))
    return UpstreamRecheck(checked_on=audit.date, network=False, repositories=repositories)


def build_preferred(root: str | Path) -> PreferredFile:
    """Each task's ``preferred.h200`` beside the published B300 choice."""
    from hf_eval.dataset import open_dataset

    ds = open_dataset(root)
    entries = []
    for name in sorted(ds.tasks):
        pick = ds.tasks[name].value.preferred.get("h200")
        if pick is None:
            continue
        path = ds.solutions[pick.solution].path
        entries.append(Preferred(
            definition=name, solution=pick.solution,
            path=str(path.resolve().relative_to(Path(root).resolve())),
            evidence=pick.evidence,
            published=PublishedChoice(hardware="NVIDIA_B300", solution=PUBLISHED_B300[name])))
    return PreferredFile(hardware="NVIDIA H200",
                         source="tasks/<definition>.json preferred.h200 (each entry's "
                                "evidence is the task's)", definitions=entries)


def build_all(root: str | Path, wheel: Path | None = None) -> dict[str, str]:
    """Every companion file's text, by path relative to ``root``."""
    import json

    from hf_eval.interfaces.audit import (
        AUDIT_PATH,
        find_wheel,
        load_audit,
        load_reading,
        reading_path,
    )

    root = Path(root)
    audit = load_audit(root / AUDIT_PATH)
    reading = load_reading(reading_path(root, audit))
    upstreams = build_upstreams(reading)
    models = {
        UPSTREAMS_PATH: upstreams,
        SGLANG_RECHECK_PATH: build_sglang_recheck(audit, reading,
                                                  wheel or find_wheel(root, reading)),
        UPSTREAM_RECHECK_PATH: build_upstream_recheck(audit, upstreams),
        QSA_TIES_PATH: qsa_tie_checks(root, TIE_SOLUTION, TIE_CASES),
        PREFERRED_PATH: build_preferred(root),
    }
    return {path: json.dumps(m.model_dump(mode="json", exclude_none=True), indent=2,
                             ensure_ascii=False) + "\n" for path, m in models.items()}
