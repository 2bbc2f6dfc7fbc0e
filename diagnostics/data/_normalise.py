"""Documented, opt-in text normalisation (never applied silently)."""

from __future__ import annotations


def normalise_csv_quotes(text: str) -> str:
    """Undo CSV-escaping leftovers as found in ~800 TERRa texts.

    TERRa keeps texts such as ``\"\"\"Решение ...\"\", - отмечается.\"``: the whole text was wrapped in
    quotes and inner quotes doubled, then written out without unescaping. When a text contains
    a doubled quote ``\"\"``, one wrapping pair of quotes (if present) is removed and every ``\"\"``
    becomes ``\"``. Texts without a doubled quote are returned unchanged.

    Parameters
    ----------
    text : str
        A premise or hypothesis.

    Returns
    -------
    str
        The unescaped text.

    Examples
    --------
    >>> normalise_csv_quotes('\"\"\"Да\"\", - сказал он.\"')
    '\"Да\", - сказал он.'
    >>> normalise_csv_quotes('Обычный текст.')
    'Обычный текст.'
    """
    if '""' not in text:
        return text
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    return text.replace('""', '"')
