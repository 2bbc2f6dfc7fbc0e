"""The error type of malformed input (its home is :mod:`diagnostics.core.tables`, the one table reader) and its
helpers."""

from __future__ import annotations

from diagnostics.core.tables import DataFormatError

__all__ = ["DataFormatError", "shorten"]


def shorten(value: object, limit: int = 60) -> str:
    """Cut the ``repr`` of a value to ``limit`` characters, for error messages.

    Parameters
    ----------
    value : object
        Any value.
    limit : int
        Maximum length; a longer ``repr`` ends with ``...``.

    Returns
    -------
    str
        The possibly shortened ``repr``.
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
