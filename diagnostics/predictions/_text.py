"""The text key under which a file's (premise, hypothesis) pair is matched to a dataset example.

Files that carry only the texts (a colleague's spreadsheet, an exported prompt log) rarely reproduce them byte for
byte: a spreadsheet curls the quotes, an editor turns a non-breaking space into a space, a tokeniser's detokeniser
adds a space before a closing guillemet. :func:`match_key` removes exactly these differences and nothing else
(case, punctuation other than quotes, and spelling are kept), so that two keys are equal only when a reader would
call the texts the same.

Exports lose more than that: a spreadsheet round trip may drop the quotation marks of ``"Сатурн V"`` altogether.
:func:`loose_key` ignores every punctuation mark; the importer uses it only as a second tier, for rows whose
:func:`match_key` finds no example, and reports each row it matched that way.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters read as a double quote: curly, low-9, reversed, double prime, guillemets, CJK quotation marks.
DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\u301d\u301e\u301f"
#: Characters read as a single quote (apostrophe): curly, low-9, reversed, prime, single guillemets.
SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2039\u203a"
#: Invisible characters removed: zero-width space, non-joiner, joiner, word joiner, byte order mark, soft hyphen.
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"

_TRANSLATION = str.maketrans({**{c: '"' for c in DOUBLE_QUOTES}, **{c: "'" for c in SINGLE_QUOTES},
                              **{c: None for c in INVISIBLE}})
_SPACE_AROUND_QUOTE = re.compile(r"\s*([\"'])\s*")


def normalise_text(text: str) -> str:
    """Normalise a text for comparison: Unicode NFKC, straight quotes, single spaces.

    Parameters
    ----------
    text : str
        A premise or hypothesis.

    Returns
    -------
    str
        The text in NFKC form with every quotation mark of :data:`DOUBLE_QUOTES` as ``"`` and of
        :data:`SINGLE_QUOTES` as ``'``, invisible characters (:data:`INVISIBLE`) removed, and every run of white
        space (non-breaking spaces, tabs, line breaks included) one space, none at either end.

    Examples
    --------
    >>> normalise_text("\u00abLe chat\u00a0\u00bb  dort.\\n")
    '"Le chat " dort.'
    """
    text = unicodedata.normalize("NFKC", str(text)).translate(_TRANSLATION)
    return " ".join(text.split())


def match_key(premise: str, hypothesis: str) -> str:
    """Build the key a (premise, hypothesis) pair is matched under.

    Both texts go through :func:`normalise_text`; white space next to a quotation mark is then dropped, because
    typographic conventions differ there (``« mot »`` against ``"mot"``) while the words do not.

    Parameters
    ----------
    premise : str
    hypothesis : str

    Returns
    -------
    str
        ``<premise>`` and ``<hypothesis>`` joined by a tab (which normalised text never holds).

    Examples
    --------
    >>> match_key("\u201cYes,\u201d she said.", "It  rains.") == match_key('" Yes, " she said.', "It rains.")
    True
    """
    return "\t".join(_SPACE_AROUND_QUOTE.sub(r"\1", normalise_text(part)) for part in (premise, hypothesis))


def loose_key(premise: str, hypothesis: str) -> str:
    """Build the second-tier key: :func:`match_key`'s normalisation with every punctuation mark removed.

    Quotation marks, apostrophes, dashes, brackets and stops (every character of a Unicode punctuation category)
    are dropped and white space is collapsed again, so a pair whose export lost its quotation marks (``Сатурн V``
    for ``"Сатурн V"``) or other punctuation gets the key of the original. Case, letters and digits are kept.
    The key is the cleaned premise and hypothesis, joined by a tab.

    Examples
    --------
    >>> loose_key('Ракета \u00abСатурн V\u00bb стартовала.', "Да.") == loose_key("Ракета Сатурн V стартовала", "Да")
    True
    """
    return "\t".join(" ".join("".join(c for c in normalise_text(part) if not unicodedata.category(c).startswith("P"))
                               .split()) for part in (premise, hypothesis))
