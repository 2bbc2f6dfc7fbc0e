"""Read template YAML with the line of every mapping, key and sequence item (:mod:`diagnostics.core.yaml_lines`).

Syntax errors are reported as :class:`~diagnostics.behave.TemplateError` (``file:line: expected valid
YAML, found ...``).
"""

from __future__ import annotations

from pathlib import Path

from diagnostics.core.yaml_lines import LineDict, LineList, YAMLLineError, line_of, load_yaml_lines

from ._errors import TemplateError

__all__ = ["LineDict", "LineList", "line_of", "load_yaml"]


def load_yaml(path: str | Path):
    """Parse a YAML file into :class:`LineDict` / :class:`LineList` containers.

    The document's mappings and sequences carry line numbers. A YAML syntax error raises ``TemplateError`` with the line
    the parser reports.
    """
    try:
        return load_yaml_lines(path)
    except YAMLLineError as err:
        raise TemplateError(Path(path), err.line, "valid YAML", err.problem) from None
