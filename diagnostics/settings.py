"""One settings system: typed dataclass fields, one value converter, one override parser, config files.

A settings class (:class:`~diagnostics.finetune.SweepConfig`, the pipeline's
:class:`~diagnostics.pipeline.ScaleSpec`) declares each setting with :func:`setting`: the field's type hint
says what a value converts to, its metadata the allowed ``choices``, the ``check`` of its range and, for structured
values, its own ``reader``. :func:`convert_fields` turns the values as written (YAML, TOML, ``--set key=value``)
into those types and :func:`field_problems` checks ranges and choices, every problem as ``(key, message)``;
:class:`ConfigError` names each one with the file and line of the key, or the override that set it.

Settings as written come in through :mod:`diagnostics.settings_input`, the one parser of ``key=value`` overrides
and YAML / TOML config files.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from diagnostics.errors import UserInputError

class ConfigError(UserInputError):
    """Sweep config values that cannot be right, one ``(key, message)`` per problem, all on one line.

    Each problem reads ``<file>:<line>: <key>: expected ..., found ...`` when the config came from a file (the
    line of the key), ``<file> (--set key=value): <key>: ...`` when an override set it, else ``<key>: ...``.

    Parameters
    ----------
    problems : list of (str, str)
        Dotted key (``lr``, ``extra_data.size``, ``models[0].path``; ``""`` for the whole file) and message.
    source : ConfigSource, optional
        Where the values came from.
    """

    def __init__(self, problems: list[tuple[str, str]], source: ConfigSource | None = None):
        self.problems = list(problems)
        self.source = source
        super().__init__("; ".join(self.lines()))

    def lines(self) -> list[str]:
        """Every problem as one located line.

        Returns
        -------
        list of str
            ``<where>: <key>: <message>`` per problem (``<where>`` left out when unknown).
        """
        out = []
        for key, message in self.problems:
            where = self.source.where(key) if self.source is not None else None
            out.append(": ".join(part for part in (where, key, message) if part))
        return out

    def located(self, source: ConfigSource | None) -> ConfigError:
        """The same problems named with ``source`` (unchanged when already located or ``source`` is None).

        Parameters
        ----------
        source : ConfigSource or None
            Where the values came from.

        Returns
        -------
        ConfigError
        """
        if self.source is not None or source is None:
            return self
        return ConfigError(self.problems, source)


_KEY_PARTS = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class ConfigSource:
    """Where a config's values came from: its file (with the line of every key for YAML) and the overrides.

    Parameters
    ----------
    path : str, optional
        The config file.
    document : object, optional
        The file's mapping as read by :func:`diagnostics.yaml_lines.load_yaml_lines` (lines of keys), if YAML.
    overrides : tuple of (str, str or None)
        Dotted key and how it was given (``--set lr=1``; ``None`` for values set by code), in order.
    key_lines : dict, optional
        Dotted key -> line, for files read without line-aware containers (TOML).
    """

    path: str | None = None
    document: Any = field(default=None, compare=False, repr=False)
    overrides: tuple[tuple[str, str | None], ...] = ()
    key_lines: dict[str, int] | None = field(default=None, compare=False, repr=False)

    def with_overrides(self, items: list[tuple[str, str | None]]) -> ConfigSource:
        """Return this source with more overrides (later ones win).

        Parameters
        ----------
        items : list of (str, str or None)
            Dotted key and how it was given.

        Returns
        -------
        ConfigSource
        """
        return dataclasses.replace(self, overrides=self.overrides + tuple(items))

    def where(self, key: str) -> str | None:
        """Name the place of ``key``: ``file:line``, ``file (--set k=v)``, ``--set k=v``, ``file`` or None.

        Parameters
        ----------
        key : str
            Dotted key with list indices (``models[0].path``).

        Returns
        -------
        str or None
        """
        for given, label in reversed(self.overrides):
            if key == given or key.startswith((given + ".", given + "[")) or given.startswith(key + ".") and key:
                if label is None:
                    return None
                return f"{self.path} ({label})" if self.path else label
        if self.path is None:
            return None
        from diagnostics.yaml_lines import LineDict, LineList, line_of

        line = None
        node = self.document
        for index, name in _KEY_PARTS.findall(key):
            step = int(index) if index else name
            if isinstance(node, LineDict) and step in node or isinstance(node, LineList) and isinstance(step, int) \
                    and 0 <= step < len(node):
                line = line_of(node, step)
                node = node[step]
            else:
                break
        if line is None and self.key_lines:
            parts = key.replace("[", ".[").split(".")
            line = next((self.key_lines[".".join(parts[:n])] for n in range(len(parts), 0, -1)
                         if ".".join(parts[:n]) in self.key_lines), None)
        return f"{self.path}:{line}" if line else self.path


#: Spellings from other tools, mapped to ours for the suggestion of a choice.
ALIASES = {"gpu": "cuda", "cuda0": "cuda:0", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
           "float32": "fp32", "full": "fp32", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
           "adam_w": "adamw", "local": "inprocess", "process": "pool", "slurm": "submitit", "acc": "accuracy"}
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


class Bad(Exception):
    """One problem found while reading a value: the dotted ``key`` and the ``message``.

    Parameters
    ----------
    key : str
        Dotted key of the value (``extra_data.size``, ``seeds[1]``).
    message : str
        What was expected and what was found.
    """

    def __init__(self, key: str, message: str):
        super().__init__(key, message)
        self.key, self.message = key, message


def show(value: Any) -> str:
    """Spell a value as a user wrote it, for messages (YAML's null and booleans, short numbers).

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    str
        ``null``, ``true``, ``1e-05``, ``'text'`` (cut to 60 characters).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def hint(word: Any, choices) -> str:
    """Suggest the closest of ``choices`` (or a known alias, :data:`ALIASES`) for a misspelt word.

    Parameters
    ----------
    word : object
        What was written.
    choices : iterable
        The accepted values.

    Returns
    -------
    str
        `` (did you mean 'x'?)``, or ``""`` when nothing is close.
    """
    word = str(word)
    alias = ALIASES.get(word.lower())
    if alias is not None and alias in choices:
        return f" (did you mean {alias!r}?)"
    by_lower = {str(c).lower(): str(c) for c in choices}
    near = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[near[0]]!r}?)" if near else ""


def choice(value: Any, choices: tuple) -> str:
    """Word the problem of a value outside its choices.

    Parameters
    ----------
    value : object
        What was written.
    choices : tuple
        The accepted values.

    Returns
    -------
    str
        ``expected one of a, b, found 'c' (did you mean 'a'?)``.
    """
    return f"expected one of {', '.join(map(str, choices))}, found {value!r}{hint(value, choices)}"


def check_keys(mapping: dict, known: tuple[str, ...], key: str) -> None:
    """Refuse a key of ``mapping`` that is not ``known``.

    Parameters
    ----------
    mapping : dict
        The mapping as written.
    known : tuple of str
        Its accepted keys.
    key : str
        Dotted key of the mapping itself.

    Raises
    ------
    Bad
        Naming the first unknown key, with a suggestion.
    """
    for name in mapping:
        if name not in known:
            raise Bad(f"{key}.{name}", f"unknown key{hint(name, known)}; expected {', '.join(known)}")


def read_integer(value: Any, key: str, optional: bool = False) -> int | None:
    """Convert a value to an integer (``"3"`` too; not ``3.0`` nor ``true``).

    Parameters
    ----------
    value : object
        As written.
    key : str
        Its dotted key, for the problem.
    optional : bool
        Let ``None`` through.

    Returns
    -------
    int or None

    Raises
    ------
    Bad
        For anything else.
    """
    if value is None and optional:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    raise Bad(key, f"expected an integer, found {repr(value) if isinstance(value, float) else show(value)}")


def read_number(value: Any, key: str, optional: bool = False) -> float | None:
    """Convert a value to a float (``"5e-5"`` too, which YAML 1.1 reads as a string).

    Parameters
    ----------
    value : object
        As written.
    key : str
        Its dotted key, for the problem.
    optional : bool
        Let ``None`` through.

    Returns
    -------
    float or None

    Raises
    ------
    Bad
        For anything else.
    """
    if value is None and optional:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT.match(value.strip()):
        return float(value)
    raise Bad(key, f"expected a number, found {show(value)}")


def read_boolean(value: Any, key: str, optional: bool = False) -> bool | None:
    """Convert a value to a boolean (``true``/``false``, ``yes``/``no``, ``1``/``0``).

    Parameters
    ----------
    value : object
        As written.
    key : str
        Its dotted key, for the problem.
    optional : bool
        Let ``None`` through.

    Returns
    -------
    bool or None

    Raises
    ------
    Bad
        For anything else.
    """
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise Bad(key, f"expected true or false, found {show(value)}")


def read_string(value: Any, key: str, optional: bool = False) -> str | None:
    """Convert a value to a non-empty string (numbers are spelt as written).

    Parameters
    ----------
    value : object
        As written.
    key : str
        Its dotted key, for the problem.
    optional : bool
        Let ``None`` through.

    Returns
    -------
    str or None

    Raises
    ------
    Bad
        For anything else, or an empty string.
    """
    if value is None and optional:
        return None
    if isinstance(value, str):
        if not value.strip():
            raise Bad(key, "expected a non-empty string, found ''")
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise Bad(key, f"expected a string, found {show(value)}")


def read_mapping(value: Any, key: str, what: str) -> dict:
    """Accept a mapping (``None`` is an empty one).

    Parameters
    ----------
    value : object
        As written.
    key : str
        Its dotted key, for the problem.
    what : str
        What the mapping holds, for the problem (``of executor options``).

    Returns
    -------
    dict

    Raises
    ------
    Bad
        For anything else.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Bad(key, f"expected a mapping {what}, found {show(value)}")
    return value


def as_list(value: Any) -> list:
    """Return a value as a list: ``None`` -> ``[]``, a list or tuple as it is, anything else as its one item.

    Parameters
    ----------
    value : object
        As written.

    Returns
    -------
    list
    """
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


#: The readers of scalar types, by the type a field's hint names.
SCALARS = {int: read_integer, float: read_number, bool: read_boolean, str: read_string}


def setting(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, choices: tuple = (),
            check: tuple | None = None, reader: Any = None, help: str = "") -> Any:
    """Declare a setting: a dataclass field whose metadata carries its choices, range check, reader and help.

    Parameters
    ----------
    default : object, optional
        The default value.
    factory : callable, optional
        Makes the default (for mutable ones), as ``dataclasses.field(default_factory=...)``.
    choices : tuple
        The accepted values (empty: any value of the type).
    check : (callable, str), optional
        ``(test, what is expected)``: ``test(value)`` is true for an allowed value (of every item of a tuple);
        ``None`` passes for an optional setting.
    reader : callable, optional
        ``reader(value, key) -> typed value`` for a structured setting (raises :class:`Bad`); default: the
        converter of the field's type hint.
    help : str
        One line of help.

    Returns
    -------
    dataclasses.Field
    """
    metadata = {"choices": tuple(choices), "check": check, "reader": reader, "help": help}
    return field(default=default, default_factory=factory, metadata=metadata)


@functools.cache
def field_types(settings_class: type) -> dict[str, tuple[Any, Any, bool]]:
    """Describe what every field of a settings class converts to, from its type hint.

    Parameters
    ----------
    settings_class : type
        A dataclass.

    Returns
    -------
    dict
        Field -> (scalar type of :data:`SCALARS` or the hint's type, item type of a ``tuple[x, ...]`` or None,
        whether ``None`` is allowed).
    """
    out = {}
    for name, hint_ in typing.get_type_hints(settings_class).items():
        args = typing.get_args(hint_) if isinstance(hint_, types.UnionType) else (hint_,)
        kind = next((a for a in args if a in SCALARS), next((a for a in args if a is not type(None)), hint_))
        item = typing.get_args(kind)[0] if typing.get_origin(kind) is tuple else None
        out[name] = (kind, item, type(None) in args)
    return out


def convert(settings_class: type, name: str, value: Any, key: str | None = None) -> Any:
    """Convert one value as written to the type of a field of ``settings_class`` (its ``reader``, or its type hint).

    Parameters
    ----------
    settings_class : type
        A settings dataclass (fields declared with :func:`setting` or plain ones).
    name : str
        The field.
    value : object
        As written (YAML, TOML, ``--set``, code).
    key : str, optional
        Dotted key named in a problem (default: ``name``).

    Returns
    -------
    object
        The typed value (a tuple for ``tuple[x, ...]`` fields).

    Raises
    ------
    Bad
        For a value that does not convert.
    """
    key = key or name
    reader = {f.name: f for f in dataclasses.fields(settings_class)}[name].metadata.get("reader")
    if reader is not None:
        return reader(value, key)
    kind, item, optional = field_types(settings_class)[name]
    if value is None and optional:
        return None
    if item is not None:
        items = value if isinstance(value, (list, tuple)) else [value]
        return tuple(SCALARS[item](v, f"{key}[{i}]") for i, v in enumerate(items))
    if kind in SCALARS:
        return SCALARS[kind](value, key, optional)
    if kind is dict or typing.get_origin(kind) is dict:
        return dict(read_mapping(value, key, "of keys"))
    return value


def convert_fields(obj: Any) -> list[tuple[str, str]]:
    """Convert every field of a settings object to its type in place; a bad one falls back to its default.

    Parameters
    ----------
    obj : dataclass instance
        Frozen or not.

    Returns
    -------
    list of (str, str)
        ``(key, message)`` per value that did not convert.
    """
    problems = []
    for f in dataclasses.fields(obj):
        try:
            value = convert(type(obj), f.name, getattr(obj, f.name))
        except Bad as bad:
            problems.append((bad.key, bad.message))
            value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        object.__setattr__(obj, f.name, value)
    return problems


def field_problems(obj: Any) -> list[tuple[str, str]]:
    """Check every field against the ``check`` and ``choices`` of its :func:`setting`.

    Parameters
    ----------
    obj : dataclass instance
        With typed values (see :func:`convert_fields`).

    Returns
    -------
    list of (str, str)
        ``(key, message)`` per value out of range (``key[i]`` for an item of a tuple) or not among its choices.
    """
    problems = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.metadata.get("check") is not None:
            test, expected = f.metadata["check"]
            for i, item in enumerate(value if isinstance(value, tuple) else (value,)):
                if item is not None and not test(item):
                    problems.append((f"{f.name}[{i}]" if isinstance(value, tuple) else f.name,
                                     f"expected {expected}, found {show(item)}"))
        if f.metadata.get("choices") and value is not None and value not in f.metadata["choices"]:
            problems.append((f.name, choice(value, f.metadata["choices"])))
    return problems


def unknown_keys(values: dict, known, what: str) -> list[tuple[str, str]]:
    """Name the keys of a mapping that are not settings, each with a suggestion.

    Parameters
    ----------
    values : dict
        Key -> value as written.
    known : iterable of str
        The accepted keys.
    what : str
        What a key is (``config key``, ``scale setting``).

    Returns
    -------
    list of (str, str)
        ``(key, "unknown <what> (did you mean ...?)")`` per unknown key.
    """
    known = list(known)
    return [(str(key), f"unknown {what}{hint(key, known)}") for key in values if key not in known]

