"""Settings described for people: every field of a settings class with its default, allowed values and help.

The words come from the class itself (``setting(help=...)`` or the numpydoc ``Parameters`` of its docstring), so
``diagnostics settings``, ``docs/settings.md`` and the classes' own documentation say the same thing.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any


def describe_settings(settings_class: type) -> list[dict[str, str]]:
    """Describe every setting of a settings class: its key, type, default, allowed values and help.

    The help of a field is its ``setting(help=...)`` when given, else the description of its name in the class
    docstring's numpydoc ``Parameters`` section (where the settings classes document their fields), so each
    setting's words are written once.

    Parameters
    ----------
    settings_class : type
        A dataclass whose fields are declared with :func:`diagnostics.settings.setting` (or plain fields).

    Returns
    -------
    list of dict
        One dict per field, in declaration order, with ``key``, ``type``, ``default`` (as a ``--set`` value
        would spell it; empty when required), ``allowed`` (the choices, or what the range check expects) and
        ``help`` (one paragraph).
    """
    documented = docstring_parameters(settings_class.__doc__ or "")
    rows = []
    for item in dataclasses.fields(settings_class):
        if not item.init:
            continue
        meta = item.metadata
        if item.default is not dataclasses.MISSING:
            default = spelled(item.default)
        elif item.default_factory is not dataclasses.MISSING:
            default = spelled(item.default_factory())
        else:
            default = ""
        allowed = " | ".join(map(str, meta.get("choices") or ())) or (meta.get("check") or (None, ""))[1]
        kind = item.type if isinstance(item.type, str) else getattr(item.type, "__name__", str(item.type))
        rows.append({"key": item.name, "type": kind, "default": default, "allowed": allowed,
                     "help": _plain_markup(meta.get("help") or documented.get(item.name, ""))})
    return rows


def spelled(value: Any) -> str:
    """Spell a value as a ``--set KEY=VALUE`` (YAML flow style) would: ``null``, ``true``, ``[en, ru]``.

    Parameters
    ----------
    value : object
        A setting's value: scalars, lists, tuples, mappings and dataclasses (their fields that are not None).

    Returns
    -------
    str
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(spelled(item) for item in value) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {spelled(item)}" for key, item in value.items()) + "}"
    return str(value)


_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr):`~?([^`]+)`")


def _plain_markup(text: str) -> str:
    """Docstring markup as Markdown code spans: ``x`` and :class:`x` become `x`."""
    return _ROLE.sub(lambda m: f"`{m.group(1)}`", text.replace("``", "`"))


def docstring_parameters(doc: str) -> dict[str, str]:
    """Read the ``Parameters`` section of a numpydoc docstring.

    Parameters
    ----------
    doc : str
        The docstring.

    Returns
    -------
    dict
        Parameter name -> its description as one line (names listed together, ``a, b : int``, share it).
    """
    lines = inspect.cleandoc(doc).splitlines()
    found: dict[str, str] = {}
    try:
        start = next(i for i, line in enumerate(lines[:-1])
                     if line.strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"})
    except StopIteration:
        return found
    names: list[str] = []
    body = lines[start + 2:]
    for i, line in enumerate(body):
        if not line.strip():
            continue
        if not line.startswith(" "):
            if i + 1 < len(body) and body[i + 1].strip() and set(body[i + 1].strip()) == {"-"}:
                break  # the next section ("Returns", "Notes" ...)
            names = [name.strip().lstrip("*") for name in line.split(" : ")[0].split(",")]
            found.update({name: "" for name in names})
        elif names:
            for name in names:
                found[name] = (found[name] + " " + line.strip()).strip()
    return found


__all__ = ["describe_settings", "docstring_parameters", "spelled"]
