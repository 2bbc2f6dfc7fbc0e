"""Russian inflection of lexicon entries with pymorphy3 (case, number), keeping capitalisation."""

from __future__ import annotations

from functools import lru_cache

#: Grammemes a template may ask for (``{a.gent}``, ``{x.ablt+plur}``).
RU_GRAMMEMES = frozenset({"nomn", "gent", "datv", "accs", "ablt", "loct", "sing", "plur"})
_GENDER = {"m": "masc", "f": "femn", "n": "neut"}


@lru_cache(maxsize=1)
def _analyzer():
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


def _restore_case(original: str, inflected: str) -> str:
    """Copy the capitalisation of each hyphen-separated part of ``original`` onto ``inflected``."""
    parts_o, parts_i = original.split("-"), inflected.split("-")
    if len(parts_o) != len(parts_i):
        return inflected[:1].upper() + inflected[1:] if original[:1].isupper() else inflected
    return "-".join(i[:1].upper() + i[1:] if o[:1].isupper() else i for o, i in zip(parts_o, parts_i))


@lru_cache(maxsize=4096)
def inflect_ru(word: str, grammemes: tuple[str, ...], gender: str | None = None) -> str | None:
    """Inflect one Russian word (a name, city, noun) to the requested grammemes.

    ``word`` is the nominative singular as written in the lexicon (``"Санкт-Петербург"``); ``grammemes`` are pymorphy3
    grammemes from :data:`RU_GRAMMEMES`, e.g. ``("ablt",)``; ``gender`` (``m`` / ``f`` / ``n``, the lexicon's) chooses
    among ambiguous analyses. The form keeps the original capitalisation; ``None`` when pymorphy3 cannot inflect the
    word (multi-word phrases, unknown words without a matching analysis).
    """
    if " " in word.strip():
        return None
    parses = _analyzer().parse(word)
    lower = word.lower().replace("ё", "е")

    def rank(p) -> tuple:
        tag = p.tag
        return (p.normal_form.replace("ё", "е") == lower, "nomn" in tag, gender is None or _GENDER.get(gender) in tag,
                "sing" in tag, p.score)

    candidates = [p for p in parses if "NOUN" in p.tag]
    if not candidates:
        return None
    best = max(candidates, key=rank)
    if best.normal_form.replace("ё", "е") != lower:
        return None
    nominative = best.inflect({"nomn", "sing"}) or best
    inflected = nominative.inflect(set(grammemes))
    if inflected is None:
        return None
    return _restore_case(word, inflected.word)
