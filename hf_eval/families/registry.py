"""The op families the harness knows, by ``op_type``: an explicit list, one line each.

Adding a family: write ``hf_eval/families/<op_type>/__init__.py`` declaring ``FAMILY`` (see
:class:`~hf_eval.families.base.Family`) and add it to :data:`FAMILIES` below. Beside it,
the family's folder holds each of its definitions' data (:func:`definition_file`):
``<definition>.cases.json`` (the sample's recipes), ``<definition>.shapes.json`` (the
benchmark shapes) and ``<definition>.roofline.json`` (the roofline formulas). A
definition whose ``op_type`` has no family (a toy in the tests, a definition proposed by
``capture``) is still audited and checked: it has no sample generator, no value rule
beyond its shapes and constraints, and the audit's default second input set.
"""

from __future__ import annotations

import glob
from pathlib import Path

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

#: The folder of the family folders (``<op_type>/``), each holding its definitions' data.
FAMILIES_DIR = Path(__file__).parent
#: The kinds of per-definition data file a family folder holds: ``<definition>.<kind>.json``.
DATA_KINDS = ("cases", "shapes", "roofline")


def definition_files(kind: str, root: Path | None = None) -> dict[str, Path]:
    """Every ``<root>/<family>/<definition>.<kind>.json``, by definition name (``root``
    defaults to :data:`FAMILIES_DIR`); a definition in two family folders is an error."""
    if kind not in DATA_KINDS:
        raise ValueError(f"unknown data kind {kind!r}: one of {DATA_KINDS}")
    root = FAMILIES_DIR if root is None else root
    suffix = f".{kind}.json"
    found: dict[str, Path] = {}
    for path in sorted(root.glob(f"*/*{suffix}")):
        name = path.name[:-len(suffix)]
        if name in found:
            raise DataError(path, f"definition {name!r} also has {found[name]}: one family "
                            "folder holds a definition's data")
        found[name] = path
    return found


def definition_file(name: str, kind: str, root: Path | None = None,
                    op_type: str | None = None) -> Path:
    """``<root>/<family>/<name>.<kind>.json``: the data file of definition ``name`` in the
    family folder that holds it. Where none does, the path it would have: in ``op_type``'s
    folder when given, else ``<root>/*/`` (a path that is no file)."""
    if kind not in DATA_KINDS:
        raise ValueError(f"unknown data kind {kind!r}: one of {DATA_KINDS}")
    root = FAMILIES_DIR if root is None else root
    found = sorted(root.glob(f"*/{glob.escape(name)}.{kind}.json"))
    if len(found) > 1:
        raise DataError(found[1], f"definition {name!r} also has {found[0]}: one family "
                        "folder holds a definition's data")
    return found[0] if found else root / (op_type or "*") / f"{name}.{kind}.json"


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
