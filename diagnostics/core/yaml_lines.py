"""Read YAML while remembering the 1-based line of every mapping, key and sequence item.

The files people edit by hand (annotator rules, behavioural templates) are read with :func:`load_yaml_lines`, so
that every later check can report ``file:line``: mappings come back as :class:`LineDict`, sequences as
:class:`LineList`, and a syntax error as :class:`YAMLLineError` naming the file and the line the parser reports.

Anchors and aliases (``&name`` / ``*name``) are read, but a document whose aliases would expand it beyond
:data:`MAX_NODES` nodes (a "billion laughs" file: a few lines that grow to gigabytes once copied or written out),
and an alias of a node inside itself, are refused as invalid YAML at the alias's line.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from diagnostics.core.errors import UserInputError


class LineDict(dict):
    """A ``dict`` that knows its own line and the line of each key (``key_lines``)."""

    line: int = 0
    key_lines: dict


class LineList(list):
    """A ``list`` that knows its own line and the line of each item (``item_lines``).

    Parameters
    ----------
    iterable : iterable, optional
        The items, as for ``list``.
    """

    line: int = 0
    item_lines: list


class YAMLLineError(UserInputError):
    """A file is not valid YAML; ``path``, ``line`` (None when the parser gives none) and ``problem``.

    Parameters
    ----------
    path : str or Path
    line : int or None
        1-based line of the problem, None when the parser gives none.
    problem : str
        The parser's description.
    """

    def __init__(self, path: str | Path, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: invalid YAML: {problem}")


#: Most nodes (scalars, mappings, sequences) a document may hold with every alias expanded.
MAX_NODES = 100_000


class _Loader(yaml.SafeLoader):
    """SafeLoader that remembers the line of every mapping, mapping key, sequence and sequence item.

    It also counts the nodes of the document with its aliases expanded, and refuses more than :data:`MAX_NODES`
    or a recursive alias.
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._expanded = 0
        self._sizes: dict[int, int] = {}
        self._open: set[str] = set()

    def compose_node(self, parent, index):  # noqa: D102 - the composer's own hook
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open:
                raise yaml.composer.ComposerError(None, None, f"alias *{event.anchor} refers to a node that holds "
                                                  "it (a recursive alias)", event.start_mark)
            node = self.anchors.get(event.anchor)
            self._count(_size(node, self._sizes) if node is not None else 0, event)
            return super().compose_node(parent, index)
        self._count(1, event)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open.discard(anchor)

    def _count(self, n: int, event) -> None:
        self._expanded += n
        if self._expanded > MAX_NODES:
            raise yaml.composer.ComposerError(None, None, f"aliases expand the document beyond {MAX_NODES:,} nodes "
                                              "(refused: a file that grows without bound when expanded)",
                                              event.start_mark)


def _size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """Nodes under ``node`` (itself included) with every alias expanded; memoised by node identity."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_size(item, sizes) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        total += sum(_size(k, sizes) + _size(v, sizes) for k, v in node.value)
    sizes[id(node)] = total
    return total


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


def load_yaml_lines(path: str | Path):
    """Parse a UTF-8 YAML file into :class:`LineDict` / :class:`LineList` containers.

    Parameters
    ----------
    path : str or Path
        The file to read.

    Returns
    -------
    object
        The document; its mappings and sequences carry line numbers.

    Raises
    ------
    YAMLLineError
        Invalid YAML: the line is that of the parser's problem mark (or its context mark when it has none), None
        when the error has no position; ``problem`` is the parser's description.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        problem = getattr(err, "problem", None)
        raise YAMLLineError(path, mark.line + 1 if mark is not None else None,
                            str(problem or err)) from None


def line_of(container, key, default: int | None = None) -> int | None:
    """Line of ``key`` (a mapping key or a list index) in a line-aware container, else ``default``.

    Parameters
    ----------
    container : LineDict, LineList or object
        A container from :func:`load_yaml_lines` (anything else has no lines: its ``line`` attribute or
        ``default``).
    key : object
        A mapping key, or an index into a sequence.
    default : int, optional
        Returned when no line is known.

    Returns
    -------
    int or None
    """
    if isinstance(container, LineDict):
        return container.key_lines.get(key, container.line or default)
    if isinstance(container, LineList) and isinstance(key, int) and 0 <= key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", default) or default


def plain(value):
    """The same document with the line-tracking containers replaced by plain ``dict`` and ``list``.

    Parameters
    ----------
    value : object
        A document (or part of one) from :func:`load_yaml_lines`.

    Returns
    -------
    object
    """
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
