"""What a slot's filler contributes to a sentence: its agreement key and its named forms (Russian: inflected)."""

from __future__ import annotations

from ._inflect import RU_GRAMMEMES, inflect_ru
from ._plural import plural_category
from ._specs import Filler


def agreement_key(filler: Filler, language: str) -> str | None:
    """Give the key other words agree with: the gender of a lexicon filler, or the CLDR plural category of a number.

    Parameters
    ----------
    filler : Filler
        A lexicon entry or a number bound to a slot.
    language : str
        Language code (selects the plural rules).

    Returns
    -------
    str or None
        ``m`` / ``f`` / ``n``, a plural category (``one``, ``few``, ``many``, ``other`` ...), or ``None`` for an
        entry without gender.
    """
    if filler.value is not None:
        return plural_category(language, filler.value)
    return filler.gender


def form_of(filler: Filler, form: str, language: str) -> str | None:
    """Find a named form of a filler: listed in the lexicon, else (Russian) inflected by pymorphy3.

    Parameters
    ----------
    filler : Filler
        A lexicon entry bound to a slot.
    form : str
        The form's name (``@`` references already resolved); for Russian, grammemes joined by ``+`` (``gent``,
        ``plur+datv``).
    language : str
        Language code.

    Returns
    -------
    str or None
        The form, or ``None`` when the entry neither lists nor can inflect it.
    """
    if form in filler.forms:
        return filler.forms[form]
    if form == "text":
        return filler.text
    parts = tuple(form.split("+"))
    if language == "ru" and filler.text and set(parts) <= RU_GRAMMEMES:
        return inflect_ru(filler.text, parts, filler.gender)
    return None
