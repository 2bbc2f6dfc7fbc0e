"""The one parser of settings as written: ``key=value`` overrides and YAML / TOML config files.

``--set key=value`` (the value parsed as YAML; a dotted key reaches into a nested mapping) is read by
:func:`split_override` and applied by :func:`apply_overrides`, for the sweep config, the pipeline's scale settings
and its inputs alike. Config files are read by :func:`read_document` (YAML with the line of every key, TOML with
the lines of :func:`toml_key_lines`), so that a :class:`~diagnostics.settings.ConfigSource` can name the file and
line of a bad key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ._errors import ConfigError, ConfigSource
from ._values import show


def apply_overrides(values: dict[str, Any], overrides: list[str] | dict[str, Any]) -> dict[str, Any]:
    """``values`` (a config mapping) with ``key=value`` overrides applied; dotted keys reach nested mappings.

    Parameters
    ----------
    values : dict
        A config as a plain mapping (left unchanged; nested mappings on an overridden path are copied).
    overrides : list of str or dict
        ``["lr=5e-5", "extra_data.size=500"]`` (values parsed as YAML), ``[("lr", 5e-5)]`` or ``{"lr": 5e-5}``.

    Returns
    -------
    dict

    Raises
    ------
    ConfigError
        For an override that is not ``key=value`` or whose value is not YAML, or a dotted key through a value
        that is not a mapping.
    """
    values = dict(values)
    items = overrides.items() if isinstance(overrides, dict) else \
        (o if isinstance(o, tuple) else split_override(o) for o in overrides)
    for key, value in items:
        parts = key.split(".")
        target = values
        for part in parts[:-1]:
            inner = target.get(part)
            if inner is None:
                inner = {}
            if not isinstance(inner, dict):
                raise ConfigError([(key, f"expected {part!r} to be a mapping to set {key}, found "
                                         f"{show(inner)}")])
            target[part] = dict(inner)
            target = target[part]
        target[parts[-1]] = value
    return values


def split_override(text: str) -> tuple[str, Any]:
    """Split ``"key=value"`` into ``(key, value parsed as YAML)``.

    Parameters
    ----------
    text : str
        One override, e.g. ``"seeds=[0,1]"``.

    Returns
    -------
    tuple of (str, object)
        The stripped key and the parsed value (``None`` for an empty value).

    Raises
    ------
    ConfigError
        For text without ``=``, with an empty key, or with a value that is not YAML.
    """
    import yaml

    key, sep, raw = split_pair(text)
    if not sep or not key:
        raise ConfigError([("", f"--set {text}: expected key=value, found no '='" if not sep else
                                f"--set {text}: expected key=value, found an empty key")])
    try:
        return key, yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError([(key, f"expected a YAML value, found {raw!r} ({problem})")],
                          ConfigSource(overrides=((key, f"--set {text}"),))) from None


def split_pair(text: str) -> tuple[str, str, str]:
    """Split ``KEY=VALUE`` at its first ``=``: the one reading of every ``KEY=VALUE`` option (``--set``,
    ``--data``, ``--dataset``).

    Parameters
    ----------
    text : str

    Returns
    -------
    tuple of (str, str, str)
        The stripped key, ``"="`` (``""`` when there is none) and the value as written.
    """
    key, sep, value = text.partition("=")
    return key.strip(), sep, value


def override_items(overrides: list[str] | dict[str, Any],
                   source: ConfigSource | None = None) -> list[tuple[str, Any, str | None]]:
    """Parse overrides into ``(key, value, how it was given)``.

    Parameters
    ----------
    overrides : list of str or dict
        ``["lr=5e-5"]`` (values parsed as YAML) or ``{"lr": 5e-5}`` (set by code: no label).
    source : ConfigSource, optional
        Where the config came from; a value that is not YAML is named with it.

    Returns
    -------
    list of (str, object, str or None)
        Key, value and ``--set key=value`` (``None`` for a mapping's items).

    Raises
    ------
    ConfigError
        For an override that is not ``key=value`` or whose value is not YAML.
    """
    if isinstance(overrides, dict):
        return [(key, value, None) for key, value in overrides.items()]
    items = []
    for text in overrides:
        try:
            key, value = split_override(text)
        except ConfigError as err:
            located = source.with_overrides(err.source.overrides) if source and err.source else source
            raise ConfigError(err.problems, err.source if source is None else located) from None
        items.append((key, value, f"--set {text}"))
    return items


def override_key(override: str) -> str:
    """Return the key of a ``key=value`` override (stripped; the text itself when it has no ``=``).

    Parameters
    ----------
    override : str

    Returns
    -------
    str
    """
    return split_pair(override)[0]


def read_settings(path: str | Path, overrides: list[str] = (),
                  ignore: tuple[str, ...] = ()) -> tuple[dict[str, Any], ConfigSource]:
    """Read a config file and apply ``key=value`` overrides, remembering where every value came from.

    Parameters
    ----------
    path : str or Path
        The config file (YAML or TOML).
    overrides : list of str
        ``key=value`` overrides applied on top of it, as given to ``--set``.
    ignore : tuple of str
        Top-level sections left out (read by another command).

    Returns
    -------
    values : dict
        The file's mapping (plain containers) with the overrides applied.
    source : ConfigSource
        The file, the line of each key and the overrides, for errors.

    Raises
    ------
    ConfigError
        For a file or an override that cannot be read, named with the file (and line) or the override.
    """
    from diagnostics.core.yaml_lines import plain

    document = read_document(path)
    source = ConfigSource(str(path), document, key_lines=toml_key_lines(path) if Path(path).suffix == ".toml"
                          else None)
    items = override_items(list(overrides), source)
    source = source.with_overrides([(key, label) for key, _, label in items])
    values = {key: value for key, value in plain(document).items() if key not in ignore}
    try:
        values = apply_overrides(values, [(key, value) for key, value, _ in items])
    except ConfigError as err:
        raise err.located(source) from None
    return values, source


def toml_key_lines(path: str | Path) -> dict[str, int]:
    """The line of every ``key = value`` and ``[table]`` of a TOML file: dotted key -> its first line."""
    lines, table = {}, ""
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        header = re.match(r"^\s*\[+\s*([\w.\-]+)\s*\]+", text)
        if header:
            table = header.group(1)
            lines.setdefault(table, number)
            continue
        assignment = re.match(r"^\s*([\w\-]+)\s*=", text)
        if assignment:
            lines.setdefault(f"{table}.{assignment.group(1)}" if table else assignment.group(1), number)
    return lines


def read_document(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of a YAML (with the line of every key: ``LineDict``) or TOML config file.

    Raises ``FileNotFoundError`` / ``IsADirectoryError`` for a missing file or a folder, :class:`ConfigError` for
    invalid TOML or a top level that is not a mapping (``YAMLLineError`` for invalid YAML).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sweep config {path} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"sweep config {path} is a folder, not a file")
    if path.suffix == ".toml":
        import tomllib

        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            match = re.search(r"\(at line (\d+), column \d+\)", str(err))
            where = f"{path}:{match.group(1)}" if match else str(path)
            problem = str(err).split(" (at line")[0]
            raise ConfigError([("", f"{where}: invalid TOML: {problem}")]) from None
    else:
        from diagnostics.core.yaml_lines import YAMLLineError, load_yaml_lines

        try:
            values = load_yaml_lines(path)
        except YAMLLineError as err:
            last = max(1, len(path.read_text(encoding="utf-8").splitlines()))
            if err.line is None or err.line <= last:
                raise
            raise YAMLLineError(path, last, err.problem) from None  # "end of stream" lies past the last line
        values = {} if values is None else values
    if not isinstance(values, dict):
        raise ConfigError([("", f"{path}:1: expected a mapping of config keys at the top level, found "
                                f"{show(values)}")])
    return values
