"""The package's house rules, read from its source: every field of a typed record carries a
docstring, every module is named in ``docs/architecture.md``, imports go down its floors
("Which way imports go") and never round a circle, and a status is always the ``Status``
enum, never a string."""

from __future__ import annotations

import ast
from pathlib import Path

from hf_eval.data.status import Status
from tests.conftest import REPO

PACKAGE = REPO / "hf_eval"
#: The floors of docs/architecture.md, top (1) to bottom (6), by wing: a module or folder
#: directly under hf_eval/ (``__init__`` is the package's own module).
FLOORS = {"__main__": 1, "cli": 1, "cli_capture": 1, "listing": 1, "checker": 1, "bench": 1,
          "capture": 1, "kernel_acceptance": 1, "judge": 2, "hub": 2, "interfaces": 2,
          "dataset": 3, "samples": 4, "isolation": 5, "families": 5, "data": 6,
          "__init__": 6}


def _modules() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def _wing(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imported_wings(tree: ast.Module) -> set[str]:
    """The wings a module imports, at its top or inside a function."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return {name.split(".")[1] if "." in name else "__init__"
            for name in names if name.split(".")[0] == "hf_eval"}


def test_every_field_of_a_typed_record_has_a_docstring():
    """Each annotated field in a class body (dataclass, pydantic model, TypedDict,
    NamedTuple) is followed by a string: what the field is."""
    missing = []
    for path, tree in _modules().items():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for field, after in zip(cls.body, [*cls.body[1:], None], strict=True):
                if not (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)):
                    continue
                if field.target.id == "model_config" or \
                        ast.unparse(field.annotation).startswith("ClassVar"):
                    continue
                documented = isinstance(after, ast.Expr) and \
                    isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)
                if not documented:
                    missing.append(f"{path.relative_to(REPO)}:{field.lineno} "
                                   f"{cls.name}.{field.target.id}")
    assert missing == []


def test_every_module_is_named_in_the_architecture_doc():
    """A module's path under hf_eval/, or its file name in its wing's row (a family's
    folder is ``families/<op_type>/__init__.py``; a wing's ``__init__.py`` is the wing)."""
    doc = (REPO / "docs/architecture.md").read_text()
    unnamed = [str(path.relative_to(PACKAGE)) for path in _modules()
               if path.name != "__init__.py"
               and str(path.relative_to(PACKAGE)) not in doc and f"`{path.name}`" not in doc
               and f"{path.name} (" not in doc and f"{path.name}`" not in doc]
    assert unnamed == []


def test_imports_go_down_the_floors_and_round_no_circle():
    wings = {path: _wing(path) for path in _modules()}
    assert set(wings.values()) == set(FLOORS)  # a new wing takes its floor in the doc
    up, edges = [], set()
    for path, tree in _modules().items():
        wing = wings[path]
        for target in _imported_wings(tree) - {wing}:
            edges.add((wing, target))
            if FLOORS[target] < FLOORS[wing]:
                up.append(f"{path.relative_to(REPO)} imports hf_eval.{target}")
    assert up == []
    assert ("kernel_acceptance", "cli") not in edges  # the metric never imports the CLI

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(b == goal or (b not in seen and reaches(b, goal, seen | {b}))
                   for a, b in edges if a == start)
    assert [wing for wing in FLOORS if reaches(wing, wing, set())] == []


def test_a_status_is_the_enum_never_a_string_literal():
    values = {status.value for status in Status}
    literals = [f"{path.relative_to(REPO)}:{node.lineno} {node.value}"
                for path, tree in _modules().items() if path != PACKAGE / "data/status.py"
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and node.value in values]
    assert literals == []
