"""Option values that several commands read alike: ``KEY=VALUE`` items and comma-separated integers."""

from __future__ import annotations


def key_values(items: list[str], option: str, expected: str = "KEY=VALUE") -> dict[str, str]:
    """Read repeated ``KEY=VALUE`` options as a dict (the value may hold ``=`` and commas).

    Parameters
    ----------
    items : list of str
        The option's values, as given.
    option : str
        The option's name (``--select``), for the error.
    expected : str
        What a value should look like, for the error.

    Returns
    -------
    dict
        Key -> value (stripped of surrounding white space); a later item wins over an earlier one of its key.

    Raises
    ------
    UserInputError
        For an item without ``=``, or with an empty key or value.
    """
    from diagnostics.core.errors import UserInputError
    from diagnostics.settings import split_pair

    out = {}
    for item in items:
        key, sep, value = split_pair(item)
        if not sep or not key or not value.strip():
            raise UserInputError(f"{option} {item!r}: expected {expected}")
        out[key] = value.strip()
    return out


def int_list(text: str | None, option: str) -> list[int] | None:
    """Read comma-separated integers (``0,1,2``), as ``--seeds`` takes them.

    Parameters
    ----------
    text : str, optional
        The option's value; None when it was not given.
    option : str
        The option's name (``--seeds``), for the error.

    Returns
    -------
    list of int or None
        The integers in order (empty parts skipped); None when ``text`` is None.

    Raises
    ------
    UserInputError
        For a part that is not an integer.
    """
    from diagnostics.core.errors import UserInputError

    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserInputError(f"{option} {text!r}: expected integers separated by commas (0,1,2)") from None
