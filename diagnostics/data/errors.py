"""The one error type every reader raises for malformed input."""

from __future__ import annotations

from pathlib import Path


class DataFormatError(ValueError):
    """A data file does not match the expected format.

    The message always names the file, the 1-based line (or record) number, what was expected
    and what was found, e.g. ``data/x.jsonl:17: expected label in {entailment, not_entailment},
    found 'entailed'; did you mean 'entailment'?``.

    Attributes
    ----------
    path, line, expected, found, suggestion
        The parts of the message, for programmatic use.
    """

    def __init__(self, path: str | Path, line: int | None, expected: str, found: str, suggestion: str = ""):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        self.suggestion = suggestion
        where = f"{self.path}:{line}" if line is not None else self.path
        msg = f"{where}: expected {expected}, found {found}"
        if suggestion:
            msg += f"; {suggestion}"
        super().__init__(msg)


def shorten(value: object, limit: int = 60) -> str:
    """``repr`` of a value, cut to ``limit`` characters for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
