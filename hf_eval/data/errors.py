"""One error type for bad input, so every problem prints as a single line naming its place."""

from __future__ import annotations

from pathlib import Path


class DataError(Exception):
    """A problem with a dataset file, reported as ``file[:line]: field: rule``.

    The CLI prints ``str(error)`` and exits non-zero; it never shows a traceback for
    a ``DataError``, so the message must say everything a user needs to fix the file.
    """

    def __init__(self, file: str | Path, rule: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.file = str(file)
        self.rule = rule
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        place = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{place}: {self.field}: {self.rule}" if self.field else f"{place}: {self.rule}"
