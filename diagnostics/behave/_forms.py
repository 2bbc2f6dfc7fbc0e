"""What a slot's filler contributes to a sentence: its agreement key and its named forms (Russian: inflected)."""

from __future__ import annotations

from ._inflect import RU_GRAMMEMES, inflect_ru
from ._plural import plural_category
from ._specs import Filler


def agreement_key(filler: Filler, language: str) -> str | None:
    """Give the key other words agree with: the gender of a lexicon filler, or the CLDR plural category of a number.

    That is ``m`` / ``f`` / ``n``, a plural category of ``language`` (``one``, ``few``, ``many``, ``other`` ...), or
    ``None`` for an entry without gender.
    """
    if filler.value is not None:
        return plural_category(language, filler.value)
    return filler.gender


def form_of(filler: Filler, form: str, language: str) -> str | None:
    """Find a named form of a filler: listed in the lexicon, else (Russian) inflected by pymorphy3.

    ``form`` has its ``@`` references already resolved; for Russian it may be grammemes joined by ``+`` (``gent``,
    ``plur+datv``). ``None`` when the entry neither lists nor can inflect it.
    """
    if form in filler.forms:
        return filler.forms[form]
    if form == "text":
        return filler.text
    parts = tuple(form.split("+"))
    if language == "ru" and filler.text and set(parts) <= RU_GRAMMEMES:
        return inflect_ru(filler.text, parts, filler.gender)
    return None
