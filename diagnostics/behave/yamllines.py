"""Read YAML while remembering the 1-based line of every mapping, key and sequence item."""

from __future__ import annotations

from pathlib import Path

import yaml

from .errors import TemplateError


class LineDict(dict):
    """A ``dict`` that knows its own line and the line of each key (``key_lines``)."""

    line: int = 0
    key_lines: dict


class LineList(list):
    """A ``list`` that knows its own line and the line of each item (``item_lines``)."""

    line: int = 0
    item_lines: list


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    out = LineDict(loader.construct_mapping(node, deep=True))
    out.line = node.start_mark.line + 1
    out.key_lines = {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return out


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_sequence(node, deep=True))
    out.line = node.start_mark.line + 1
    out.item_lines = [item.start_mark.line + 1 for item in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load_yaml(path: str | Path):
    """Parse a YAML file into :class:`LineDict` / :class:`LineList` containers.

    Parameters
    ----------
    path : str or Path
        The file to read.

    Returns
    -------
    object
        The document; mappings and sequences carry line numbers.

    Raises
    ------
    TemplateError
        On a YAML syntax error (with the line the parser reports).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise TemplateError(path, line, "valid YAML", str(err.problem or err)) from None


def line_of(container, key, default: int | None = None) -> int | None:
    """Line of ``key`` (a mapping key or a list index) in a line-aware container, else ``default``."""
    if isinstance(container, LineDict):
        return container.key_lines.get(key, container.line or default)
    if isinstance(container, LineList) and isinstance(key, int) and 0 <= key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", default) or default
