"""Language-independent surface perturbations for invariance tests: typos and punctuation."""

from __future__ import annotations

import random
import re

_WORD = re.compile(r"[^\W\d_]{4,}")
_FINAL_PUNCT = re.compile(r"\s*[.!?…]+\s*$")


def add_typo(text: str, rng: random.Random) -> str | None:
    """Swap two adjacent letters inside one word of at least four letters (CheckList's ``add_typos``).

    The first letter of the word is never moved, so capitalised names stay recognisable. ``None`` when no word allows a
    visible swap.
    """
    options = []
    for match in _WORD.finditer(text):
        word = match.group()
        options += [match.start() + i for i in range(1, len(word) - 1) if word[i] != word[i + 1]]
    if not options:
        return None
    i = rng.choice(options)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def strip_punctuation(text: str) -> str | None:
    """Remove sentence-final punctuation (``.``, ``!``, ``?``, ``…``).

    The spaces around it go too; ``None`` when there is none.
    """
    stripped = _FINAL_PUNCT.sub("", text)
    return stripped if stripped != text else None
