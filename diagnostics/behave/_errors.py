"""Error types of the behavioural-test stage; messages always read ``file:line: expected ..., found ...``."""

from __future__ import annotations

from diagnostics.data import DataFormatError


class TemplateError(DataFormatError):
    """A template file (``annotators/behave/<lang>.yaml``) is malformed or cannot be rendered.

    Parameters
    ----------
    path : str or Path
    line : int or None
        1-based line (or record) number; ``None`` for a problem of the whole file.
    expected : str
        What the format requires.
    found : str
        What the file holds instead.
    suggestion : str
        A hint appended to the message, or empty.
    """


class SuiteFormatError(DataFormatError):
    """A suite file (jsonl of generated cases) is malformed.

    Parameters
    ----------
    path : str or Path
    line : int or None
        1-based line (or record) number; ``None`` for a problem of the whole file.
    expected : str
        What the format requires.
    found : str
        What the file holds instead.
    suggestion : str
        A hint appended to the message, or empty.
    """
