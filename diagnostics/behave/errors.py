"""Error types of the behavioural-test stage; messages always read ``file:line: expected ..., found ...``."""

from __future__ import annotations

from diagnostics.data.errors import DataFormatError


class TemplateError(DataFormatError):
    """A template file (``annotators/behave/<lang>.yaml``) is malformed or cannot be rendered."""


class SuiteFormatError(DataFormatError):
    """A suite file (jsonl of generated cases) is malformed."""
