"""The op families the harness knows, by ``op_type``: an explicit list, one line each.

Adding a family: write ``hf_eval/families/<op_type>.py`` declaring ``FAMILY`` (see
:class:`~hf_eval.families.base.Family`) and add it to :data:`FAMILIES` below. A
definition whose ``op_type`` has no family (a toy in the tests, a definition proposed by
``capture``) is still audited and checked: it has no sample generator, no value rule
beyond its shapes and constraints, and the audit's default second input set.
"""

from __future__ import annotations

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Definition
from hf_eval.families import (
    block_causal_attention,
    dense_attention,
    gdn,
    gemm,
    grouped_gemm,
    mixed_mla,
    moe_router,
    neighborhood_attention,
    qsa_attention,
    qsa_index,
    sparse_mla,
)
from hf_eval.families.base import Family

FAMILIES: dict[str, Family] = {family.op_type: family for family in (
    block_causal_attention.FAMILY,
    dense_attention.FAMILY,
    gdn.FAMILY,
    gemm.FAMILY,
    grouped_gemm.FAMILY,
    mixed_mla.FAMILY,
    moe_router.FAMILY,
    neighborhood_attention.FAMILY,
    qsa_attention.FAMILY,
    qsa_index.FAMILY,
    sparse_mla.FAMILY,
)}


def find(op_type: str) -> Family | None:
    """The family of ``op_type``, or None when the harness has none for it."""
    return FAMILIES.get(op_type)


def family_of(definition: Definition, needed_for: str) -> Family:
    """The family of ``definition``, which ``needed_for`` (e.g. "a sample generator")
    cannot do without: its absence is an error naming the definition and the rule."""
    family = FAMILIES.get(definition.op_type)
    if family is None:
        raise DataError(f"definitions/{definition.op_type}/{definition.name}.json",
                        f"no op family {definition.op_type!r} in hf_eval/families/registry.py, "
                        f"so there is no {needed_for} for this definition", field="op_type")
    return family
