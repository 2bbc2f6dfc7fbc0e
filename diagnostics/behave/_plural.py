"""CLDR plural categories for the numbers a template writes, per language.

Templates choose the word form that agrees with a number by category, e.g. Russian
``{n|one:книгу|few:книги|many:книг}``. Rules follow CLDR (integers only).
"""

from __future__ import annotations

SUPPORTED = ("en", "ru", "fr", "de", "sv")


def plural_category(language: str, n: int) -> str:
    """CLDR plural category of the integer ``n`` in ``language``.

    ``language`` is one of ``en, ru, fr, de, sv``; the category is ``"one"``, ``"few"``, ``"many"`` (Russian) or
    ``"other"``.

    Examples
    --------
    >>> plural_category("ru", 21), plural_category("ru", 23), plural_category("ru", 11)
    ('one', 'few', 'many')
    >>> plural_category("fr", 0), plural_category("en", 0)
    ('one', 'other')
    """
    n = abs(int(n))
    if language == "ru":
        if n % 10 == 1 and n % 100 != 11:
            return "one"
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return "few"
        return "many"
    if language == "fr":
        return "one" if n in (0, 1) else "other"
    if language in ("en", "de", "sv"):
        return "one" if n == 1 else "other"
    raise ValueError(f"no plural rules for language {language!r}; known: {', '.join(SUPPORTED)}")
