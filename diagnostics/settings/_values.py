"""One value as written (YAML, TOML, ``--set``, code) read into its type, or a :class:`Bad` naming its key; and the
words every problem uses (:func:`show`, :func:`hint`, :func:`choice`)."""

from __future__ import annotations

import difflib
import math
import numbers
import re
from typing import Any

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
    choices : iterable

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
    choices : tuple

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
    known : tuple of str
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
    """An integer (``"3"`` too; not ``3.0`` nor ``true``); ``None`` when ``optional``; else :class:`Bad`."""
    if value is None and optional:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    raise Bad(key, f"expected an integer, found {repr(value) if isinstance(value, float) else show(value)}")


def read_number(value: Any, key: str, optional: bool = False) -> float | None:
    """A float (``"5e-5"`` too, which YAML 1.1 reads as a string); ``None`` when ``optional``; else :class:`Bad`."""
    if value is None and optional:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT.match(value.strip()):
        return float(value)
    raise Bad(key, f"expected a number, found {show(value)}")


def read_boolean(value: Any, key: str, optional: bool = False) -> bool | None:
    """A boolean (``true``/``false``, ``yes``/``no``, ``1``/``0``); ``None`` when ``optional``; else :class:`Bad`."""
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise Bad(key, f"expected true or false, found {show(value)}")


def read_string(value: Any, key: str, optional: bool = False) -> str | None:
    """Convert a value to a non-empty string (numbers are spelt as written; ``None`` only when ``optional``).

    Parameters
    ----------
    value : object
    key : str
        Its dotted key, for the problem.
    optional : bool

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
    """Return a value as a list.

    Parameters
    ----------
    value : object
        ``None`` (``[]``), a list or tuple (as it is) or one item.

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
