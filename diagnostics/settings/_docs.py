"""Settings described for people: every field of a settings class with its default, allowed values, help and nature.

The words are the fields' own (``setting(help=...)``), so ``diagnostics settings``, ``docs/settings.md`` and the
classes' docstrings (whose ``Parameters`` section is written from the same help) say the same thing. What a field
declares of its nature (out of the run hash, per run, one recipe's option ...) is said after its help, in words
written here from the declaration.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any


def describe_settings(settings_class: type) -> list[dict[str, str]]:
    """Describe every setting of a settings class: its key, type, default, allowed values and help.

    Parameters
    ----------
    settings_class : type
        A subclass of :class:`~diagnostics.settings.Settings` (fields declared with
        :func:`~diagnostics.settings.setting`).

    Returns
    -------
    list of dict
        One dict per field, in declaration order, with ``key``, ``type``, ``default`` (as a ``--set`` value
        would spell it; empty when required), ``allowed`` (the choices, or what the check expects), ``nature``
        (what the field declares of its nature, in words; empty for a plain setting) and ``help`` (one
        paragraph, Markdown, the nature said at its end in italics).
    """
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
        allowed = " | ".join(map(str, meta.get("choices") or ())) or getattr(meta.get("check"), "words", "")
        kind = item.type if isinstance(item.type, str) else getattr(item.type, "__name__", str(item.type))
        nature = _nature(meta)
        help_ = _plain_markup(meta.get("help", ""))
        if nature:
            help_ = f"{help_} *{nature[0].upper()}{nature[1:]}.*"
        rows.append({"key": item.name, "type": kind, "default": default, "allowed": allowed, "nature": nature,
                     "help": help_})
    return rows


def _nature(meta: Any) -> str:
    """What a field's :func:`~diagnostics.settings.setting` declares of its nature, as words; empty for none."""
    words = []
    if not meta.get("in_run_hash", True):
        words.append("not in the run hash")
    if meta.get("hashed_when_set"):
        words.append(f"in the run hash only when not `{spelled(meta.get('unset_value'))}`")
    if meta.get("derived_from"):
        words.append(f"derived from {', '.join(f'`{name}`' for name in sorted(meta['derived_from']))} when unset")
    if meta.get("per_run"):
        words.append("each run of a fused group keeps its own")
    if meta.get("recipe"):
        words.append(f"only with `recipe: {meta['recipe']}`")
    return "; ".join(words)


def spelled(value: Any) -> str:
    """A value spelt as a ``--set KEY=VALUE`` (YAML flow style) would: ``null``, ``true``, ``[en, ru]``,
    ``{name: sick}`` (a dataclass as the mapping of its fields that are not None)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(spelled(item) for item in value) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                 if getattr(value, f.name) is not None}
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {spelled(item)}" for key, item in value.items()) + "}"
    return str(value)


_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr):`~?([^`]+)`")


def _plain_markup(text: str) -> str:
    """Docstring markup as Markdown code spans: ``x`` and :class:`x` become `x`."""
    return _ROLE.sub(lambda m: f"`{m.group(1)}`", text.replace("``", "`"))
