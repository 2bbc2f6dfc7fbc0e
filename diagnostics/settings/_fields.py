"""Settings classes: dataclass fields that carry their type, choices, check and help; one converter; one place for
the checks that need several fields.

A settings class subclasses :class:`Settings` (``class ExtraData(Settings, frozen=True)`` makes it a dataclass) and
declares each field with :func:`setting`. The field's type hint says what a value as written converts to: a scalar,
a ``tuple[x, ...]`` or ``list[x]`` of them, a mapping, or another settings class written as a mapping (nested
settings convert and check themselves the same way; their problems are named ``outer.inner``). Building an object
converts every field, derives what was left unset (``_derive``), then checks every field and the class's own
:meth:`Settings.problems`; all problems, each a ``(key, message)``, are raised together as one
:class:`~diagnostics.settings.ConfigError`. The help of the fields is the class's documentation: it becomes the
``Parameters`` section of its docstring, the ``diagnostics settings`` listing and ``docs/settings.md``.

A field also declares its nature (:data:`NATURES`): whether it enters the run hash (always, or only when set),
which settings its unset value derives from, whether each run of a fused group keeps its own, which training recipe
it is an option of. :func:`fields_declaring` lists the fields of each nature, so that the code that hashes, groups
or checks settings reads the fields instead of lists of names kept by hand.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import textwrap
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from ._errors import ConfigError, ConfigSource
from ._input import apply_overrides, override_items
from ._values import SCALARS, Bad, as_list, check_keys, choice, hint, read_mapping, show

#: A check of one value: ``check(value, key)`` -> the problems, ``(key, message)`` each (none for a good value).
Check = Callable[[Any, str], list[tuple[str, str]]]


@dataclass(frozen=True)
class Expected:
    """A check of one value: allowed when ``test(value)`` is true, else ``expected <words>, found <value>``.

    Parameters
    ----------
    test : callable
        ``test(value) -> bool``, given a converted value that is not ``None``.
    words : str
        What an allowed value is (``an integer >= 1``); also the *allowed* column of the settings reference.
    suggest : callable, optional
        ``suggest(value) -> str``: words after the value found (`` (did you mean 'x'?)``).
    """

    test: Callable[[Any], bool]
    words: str
    suggest: Callable[[Any], str] | None = None

    def __call__(self, value: Any, key: str) -> list[tuple[str, str]]:
        if self.test(value):
            return []
        return [(key, f"expected {self.words}, found {show(value)}{self.suggest(value) if self.suggest else ''}")]


#: What a setting may declare about its nature (:func:`setting`'s keywords), each with the value of a setting that
#: declares nothing; :func:`fields_declaring` lists the fields that declare another.
NATURES: dict[str, Any] = {"in_run_hash": True, "hashed_when_set": False, "derived_from": frozenset(),
                           "per_run": False, "recipe": None}


def setting(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, choices: tuple = (),
            check: Check | tuple | None = None, reader: Any = None, help: str = "", in_run_hash: bool = True,
            hashed_when_set: bool = False, unset_value: Any = dataclasses.MISSING, derived_from: Any = (),
            per_run: bool = False, recipe: str | None = None) -> Any:
    """Declare a setting: a dataclass field whose metadata carries its choices, check, reader, help and nature.

    Parameters
    ----------
    default : object, optional
    factory : callable, optional
        Makes the default (for mutable ones), as ``dataclasses.field(default_factory=...)``.
    choices : tuple
        The accepted values (empty: any value of the type).
    check : callable or (callable, str), optional
        ``check(value, key) -> [(key, message), ...]`` (an :class:`Expected`, or a function naming sub-keys of a
        mapping), or ``(test, what is expected)`` for ``Expected(test, words)``. Run on a converted value that is
        not ``None``; on every item of a tuple (``key[i]``).
    reader : callable, optional
        ``reader(value, key) -> typed value`` for a structured setting (raises
        :class:`~diagnostics.settings.Bad`); default: the converter of the field's type hint.
    help : str
        What the setting does (docstring markup); every field of a settings class has one.
    in_run_hash : bool
        False for a setting that says where or how runs execute, or which grid they belong to, not what a run
        computes: it stays out of the run hash.
    hashed_when_set : bool
        A setting added after runs were stored: at its ``unset_value`` it stays out of the run hash, so the hash
        of every run stored before it existed is unchanged.
    unset_value : object, optional
        The value the setting holds once built when nobody set it, which is the value every run had before the
        setting existed (default: ``default``; a derived setting names the value it derives to).
    derived_from : iterable of str
        The settings its unset value is derived from (by the class's ``_derive``): an override of one of them
        derives it again, unless the override sets it too.
    per_run : bool
        Each run of a fused group keeps its own value (its data, its checks and stops, its place in the store);
        runs that differ in any other setting train apart.
    recipe : str, optional
        The training recipe the setting is an option of: under another recipe it must keep its ``unset_value``.

    Returns
    -------
    dataclasses.Field
    """
    if isinstance(check, tuple):
        check = Expected(*check)
    if hashed_when_set and not in_run_hash:
        raise ValueError("setting(): hashed_when_set=True needs in_run_hash=True")
    if unset_value is dataclasses.MISSING:
        unset_value = default
    metadata = {"choices": tuple(choices), "check": check, "reader": reader, "help": help,
                "in_run_hash": in_run_hash, "hashed_when_set": hashed_when_set, "unset_value": unset_value,
                "derived_from": frozenset(derived_from), "per_run": per_run, "recipe": recipe}
    return dataclasses.field(default=default, default_factory=factory, metadata=metadata)


def fields_declaring(settings_class: type, nature: str) -> dict[str, Any]:
    """List the fields of a settings class that declare a nature other than a plain setting's.

    Parameters
    ----------
    settings_class : type
        A subclass of :class:`Settings`.
    nature : str
        A key of :data:`NATURES`: ``in_run_hash``, ``hashed_when_set``, ``derived_from``, ``per_run`` or
        ``recipe``.

    Returns
    -------
    dict
        Field name -> its declared value, in declaration order, for the fields whose value differs from
        ``NATURES[nature]`` (``fields_declaring(cls, "in_run_hash")``: the fields out of the run hash, each
        ``False``).

    Raises
    ------
    KeyError
        For a ``nature`` that is not one of :data:`NATURES`.
    """
    plain = NATURES[nature]
    return {f.name: f.metadata.get(nature, plain) for f in dataclasses.fields(settings_class)
            if f.init and f.metadata.get(nature, plain) != plain}


def unset_values(settings_class: type, names: Any = None) -> dict[str, Any]:
    """Map fields of a settings class to their unset values: what each holds once built when nobody set it.

    Parameters
    ----------
    settings_class : type
        A subclass of :class:`Settings`.
    names : iterable of str, optional
        The fields, in the order wanted (default: every field, in declaration order).

    Returns
    -------
    dict
        Field name -> its ``unset_value`` (see :func:`setting`).
    """
    fields = _fields(settings_class)
    names = [f.name for f in dataclasses.fields(settings_class) if f.init] if names is None else list(names)
    return {name: _unset_value(fields[name]) for name in names}


def _unset_value(item: dataclasses.Field) -> Any:
    """A field's declared ``unset_value``, else its default (made by its factory); MISSING for a required one."""
    value = item.metadata.get("unset_value", item.default)
    if value is dataclasses.MISSING and item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return value


@typing.dataclass_transform(field_specifiers=(setting,))
class Settings:
    """Base of the settings classes: built from values as written, converted and checked, with every problem named.

    A subclass is made a dataclass (``class Presence(Settings, frozen=True)``) whose fields are declared with
    :func:`setting`, each with its help; its docstring gets a ``Parameters`` section from that help. Building one
    converts every field to its type hint, derives what was left unset, checks every field (range, choices) and
    :meth:`problems`, and raises one :class:`~diagnostics.settings.ConfigError` naming every problem.
    """

    #: What a key of the class is called in the problem of an unknown one.
    _what = "setting"
    #: Settings whose unset value ``_derive`` fills from others: field -> the fields it derives from (their
    #: ``setting(derived_from=...)``). An override of one of those derives it again, unless it sets the field too.
    _derived = {}
    #: How a value of the class may be written besides a mapping (``a model name``), named in the problem of a bad one.
    _written_as = ""
    #: Where the values came from (file, lines, overrides), to name them in errors; not a setting.
    _source = None

    def __init_subclass__(cls, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(cls, frozen=frozen)
        undocumented = [f.name for f in dataclasses.fields(cls) if f.init and not f.metadata.get("help")]
        if undocumented:
            raise TypeError(f"{cls.__qualname__}: every setting needs setting(help=...); missing: {undocumented}")
        cls._derived = fields_declaring(cls, "derived_from")
        names = set(_fields(cls))
        unknown = {name: sorted(sources - names) for name, sources in cls._derived.items() if sources - names}
        if unknown:
            raise TypeError(f"{cls.__qualname__}: derived_from names no field of the class: {unknown}")
        cls.__doc__ = _with_parameters(cls)

    def __post_init__(self) -> None:
        problems = convert_fields(self)
        try:
            problems += self._derive()
        except (TypeError, ValueError):  # a setting it reads did not convert: that problem is named already
            if not problems:
                raise
        failed = {_field_of(key) for key, _ in problems}
        try:  # the other fields' problems too, so that one round of fixes is enough
            problems += [p for p in self._all_problems() if _field_of(p[0]) not in failed]
        except ValueError:
            if not problems:
                raise
        if problems:
            raise ConfigError(problems)

    def problems(self) -> list[tuple[str, str]]:
        """List the problems that no single field shows: settings that contradict one another.

        Returns
        -------
        list of (str, str)
            ``(key, message)`` per problem; a settings class adds its own (none here).
        """
        return []

    def validate(self) -> None:
        """Check every field (range, choices) and :meth:`problems` of the already converted settings.

        Raises
        ------
        ConfigError
            Naming every bad key with what was expected and what was found (and the file and line when the
            values came from a file).
        """
        problems = self._all_problems()
        if problems:
            raise ConfigError(problems, self._source)

    def to_dict(self) -> dict[str, Any]:
        """Convert to a plain JSON-serialisable dict (round-trips through :meth:`from_dict`).

        Returns
        -------
        dict
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: ConfigSource | None = None) -> Self:
        """Build from a mapping, rejecting unknown keys with a suggestion.

        Parameters
        ----------
        values : dict
            Field name -> value (as read from a config file).
        source : ConfigSource, optional
            Where the values came from; errors then name the file and line (or the override) of each bad key.

        Returns
        -------
        Settings
            The converted and checked settings, of this class.

        Raises
        ------
        ConfigError
            For unknown keys or invalid settings (a ``ValueError``).
        """
        if not isinstance(values, dict):
            raise ConfigError([("", f"expected a mapping of {cls._what}s, found {show(values)}")], source)
        unknown = unknown_keys(values, [f.name for f in dataclasses.fields(cls) if f.init], cls._what)
        if unknown:
            raise ConfigError(unknown, source)
        try:
            settings = cls(**values)
        except ConfigError as err:
            raise err.located(source) from None
        object.__setattr__(settings, "_source", source)
        return settings

    def with_overrides(self, overrides: list[str] | dict[str, Any], source: ConfigSource | None = None) -> Self:
        """A copy with ``key=value`` overrides applied (dotted keys reach nested mappings: ``extra_data.size=500``).

        Values are parsed as YAML scalars/flow collections: ``seeds=[0,1]``, ``lr=5e-5``, ``extra_data=null``.

        Parameters
        ----------
        overrides : list of str or dict
            ``["lr=5e-5", "extra_data.size=500"]`` or ``{"lr": 5e-5}``.
        source : ConfigSource, optional
            Where the overrides were given, named in errors; default: these settings' source and the ``--set``
            text of each override.

        Returns
        -------
        Settings
            A new, checked copy; this one is unchanged.

        Raises
        ------
        ConfigError
            For an override that is not ``key=value``, or settings that are not valid with it.
        """
        items = override_items(overrides, self._source)
        if source is None:
            source = (self._source or ConfigSource()).with_overrides([(key, label) for key, _, label in items])
        values = self.to_dict()
        overridden = {_field_of(key) for key, _, _ in items}
        for derived, sources in self._derived.items():  # derived again from what they derive from
            if derived not in overridden and overridden & sources:
                values[derived] = None
        try:
            values = apply_overrides(values, [(key, value) for key, value, _ in items])
        except ConfigError as err:
            raise err.located(source) from None
        return type(self).from_dict(values, source)

    @classmethod
    def _from_shorthand(cls, value: Any) -> Any:
        """A value written another way than as a mapping (see ``_written_as``), as its mapping; else unchanged."""
        return value

    def _derive(self) -> list[tuple[str, str]]:
        """Fill the settings left unset whose value derives from others; the problems of contradicting ones."""
        return []

    def _all_problems(self) -> list[tuple[str, str]]:
        """The fields' problems, then :meth:`problems` of the fields that have none of their own."""
        fields = field_problems(self)
        named = {_field_of(key) for key, _ in fields}
        return fields + [p for p in self.problems() if _field_of(p[0]) not in named]


def _field_of(key: str) -> str:
    """The field a dotted key belongs to (``extra_data.size`` -> ``extra_data``, ``seeds[1]`` -> ``seeds``)."""
    return re.split(r"[.\[]", key)[0]


def _joined(key: str, inner: str) -> str:
    """A nested settings' key under the key of the field that holds it."""
    return key if not inner else f"{key}{inner}" if inner.startswith("[") else f"{key}.{inner}"


def _with_parameters(cls: type) -> str:
    """The class docstring followed by a numpydoc ``Parameters`` section written from its fields' help."""
    lines = [inspect.cleandoc(cls.__doc__ or cls.__name__), "", "Parameters", "----------"]
    for item in dataclasses.fields(cls):
        if item.init:
            lines.append(f"{item.name} : {item.type if isinstance(item.type, str) else item.type.__name__}")
            lines += textwrap.wrap(item.metadata["help"], 112, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines) + "\n"


@functools.cache
def _fields(settings_class: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(settings_class)}


@functools.cache
def field_types(settings_class: type) -> dict[str, tuple[Any, Any, bool]]:
    """What every field of a settings class converts to, read from its type hints.

    Parameters
    ----------
    settings_class : type
        A :class:`Settings` subclass.

    Returns
    -------
    dict
        Field name -> ``(kind, item, optional)``: the scalar type of :data:`SCALARS`, a settings class or the hint's
        type; the item type of a ``tuple[x, ...]`` or ``list[x]``, else ``None``; whether ``None`` is allowed.
    """
    out = {}
    for name, hint_ in typing.get_type_hints(settings_class).items():
        if name not in _fields(settings_class):
            continue
        args = typing.get_args(hint_) if isinstance(hint_, types.UnionType) else (hint_,)
        kind = next((a for a in args if a in SCALARS), next((a for a in args if a is not type(None)), hint_))
        item = typing.get_args(kind)[0] if typing.get_origin(kind) in (tuple, list) else None
        out[name] = (kind, item, type(None) in args)
    return out


def convert(settings_class: type, name: str, value: Any, key: str | None = None) -> Any:
    """One value as written converted to the type of a field of ``settings_class``: by its ``reader``, else
    by its type hint (a tuple for ``tuple[x, ...]``, a list for ``list[x]``, a settings object for a nested settings
    class). Raises :class:`Bad`, or :class:`ConfigError` for nested settings with problems (named under ``key``)."""
    key = key or name
    reader = _fields(settings_class)[name].metadata.get("reader")
    if reader is not None:
        return reader(value, key)
    kind, item, optional = field_types(settings_class)[name]
    if value is None and optional:
        return None
    if item is None:
        return _converted(kind, value, key, optional)
    if typing.get_origin(kind) is list:
        return [_converted(item, v, f"{key}[{i}]") for i, v in enumerate(as_list(value))]
    items = value if isinstance(value, (list, tuple)) else [value]
    return tuple(_converted(item, v, f"{key}[{i}]") for i, v in enumerate(items))


def _converted(kind: Any, value: Any, key: str, optional: bool = False) -> Any:
    """One value converted to a scalar type, a settings class or a mapping (anything else as it is)."""
    if kind in SCALARS:
        return SCALARS[kind](value, key, optional)
    if isinstance(kind, type) and issubclass(kind, Settings):
        return _nested(kind, value, key, optional)
    if kind is dict or typing.get_origin(kind) is dict:
        return dict(read_mapping(value, key, "of keys"))
    return value


def _nested(kind: type[Settings], value: Any, key: str, optional: bool) -> Settings | None:
    """A nested settings object from its mapping (or shorthand), its problems named under ``key``."""
    if value is None and optional or isinstance(value, kind):
        return value
    value = kind._from_shorthand(value)
    fields = [f for f in dataclasses.fields(kind) if f.init]
    if not isinstance(value, dict):
        forms = f"{kind._written_as} or " if kind._written_as else ""
        raise Bad(key, f"expected {forms}a mapping {{{', '.join(f.name for f in fields)}}}"
                       f"{' or null' if optional else ''}, found {show(value)}")
    check_keys(value, tuple(f.name for f in fields), key)
    for f in fields:
        if f.name not in value and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise Bad(f"{key}.{f.name}", "expected a value, found none")
    try:
        return kind(**value)
    except ConfigError as err:
        raise ConfigError([(_joined(key, inner), message) for inner, message in err.problems]) from None


def convert_fields(obj: Any) -> list[tuple[str, str]]:
    """Convert every field of a settings object in place (a bad one falls back to its default); the problems
    of those that did not convert, every problem of a nested settings value among them."""
    problems = []
    for f in dataclasses.fields(obj):
        written = getattr(obj, f.name)
        try:
            value = convert(type(obj), f.name, written)
        except (Bad, ConfigError) as err:
            problems += [(err.key, err.message)] if isinstance(err, Bad) else err.problems
            value = f.default_factory() if f.default_factory is not dataclasses.MISSING else \
                written if f.default is dataclasses.MISSING else f.default
        object.__setattr__(obj, f.name, value)
    return problems


def field_problems(obj: Any) -> list[tuple[str, str]]:
    """Every field checked against the ``check`` and ``choices`` of its :func:`setting`: ``(key, message)``
    per value out of range (``key[i]`` for an item of a tuple) or not among its choices."""
    problems = []
    for f in dataclasses.fields(obj):
        value, check, choices = getattr(obj, f.name), f.metadata.get("check"), f.metadata.get("choices")
        if check is not None and value is not None:
            items = [(f"{f.name}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, tuple) else \
                [(f.name, value)]
            for key, item in items:
                if item is not None:
                    problems += check(item, key)
        if choices and value is not None and value not in choices:
            problems.append((f.name, choice(value, choices)))
    return problems


def unknown_keys(values: dict, known, what: str) -> list[tuple[str, str]]:
    """``(key, "unknown <what> (did you mean ...?)")`` per key of ``values`` that is not ``known``."""
    known = list(known)
    return [(str(key), f"unknown {what}{hint(key, known)}") for key in values if key not in known]
