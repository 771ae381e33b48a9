"""Packaging a candidate of tests/adversarial: its folder copied, with each shared module
of ``tests/adversarial/_kit`` it imports (``lent_kit``, ``socket_proxy``) beside its
``main.py``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

#: The modules the candidates share (tests/adversarial/_kit/).
KIT = Path(__file__).parent / "adversarial" / "_kit"


def copy_candidate(source: Path, package: Path) -> Path:
    """Copy the candidate folder ``source`` to ``package`` (which must not exist), adding
    each shared kit module its ``main.py`` imports (and those they import); returns
    ``package``."""
    shutil.copytree(source, package)
    texts = [(package / "main.py").read_text()]
    while texts:  # and each kit module those import in turn
        text = texts.pop()
        for module in sorted(KIT.glob("*.py")):
            if not (package / module.name).exists() and re.search(
                    rf"^(import {module.stem}|from {module.stem} import)\b", text,
                    re.MULTILINE):
                shutil.copy2(module, package / module.name)
                texts.append(module.read_text())
    return package
