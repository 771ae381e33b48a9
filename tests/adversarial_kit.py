"""Packaging a candidate of tests/adversarial: its folder copied, with the shared
``lent_kit`` module beside its ``main.py`` when the candidate imports it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

#: The module the candidates share (tests/adversarial/_kit/lent_kit.py).
LENT_KIT = Path(__file__).parent / "adversarial" / "_kit" / "lent_kit.py"
_IMPORTS_KIT = re.compile(r"^(import lent_kit|from lent_kit import)\b", re.MULTILINE)


def copy_candidate(source: Path, package: Path) -> Path:
    """Copy the candidate folder ``source`` to ``package`` (which must not exist), adding
    the shared kit module when its ``main.py`` imports it; returns ``package``."""
    shutil.copytree(source, package)
    if _IMPORTS_KIT.search((package / "main.py").read_text()):
        shutil.copy2(LENT_KIT, package / LENT_KIT.name)
    return package
