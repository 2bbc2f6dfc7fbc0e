"""Derivational evidence: a word is affix + a word of the other sentence (un-able ~ able), or affix + a word the
backend's lexicon knows (``known_base``: un-happy, care-less, не-доступный)."""

from __future__ import annotations

from ._evidence import Analysis
from ._rules import Derivation, FeatureRule


def affixed(rule: Derivation, lower: str, lemma: str, pos: str) -> tuple | None:
    """Find whether a token could be a derived form under ``rule``, and from what.

    ``lower`` and ``lemma`` are lower-cased. Returns ``(lower, lemma, prefixed, suffixed)`` with ``prefixed`` =
    ``(prefix, base)`` pairs and ``suffixed`` = ``(form, stem)`` pairs of the lemma and the lower-case form; ``None``
    when it has neither.
    """
    if rule.pos and pos not in rule.pos or not (lemma.startswith(rule.prefixes) or lower.startswith(rule.prefixes)
                                                or lemma.endswith(rule.suffixes) or lower.endswith(rule.suffixes)):
        return None
    prefixed, suffixed = [], []
    for form in (lemma,) if lemma == lower else (lemma, lower):
        if rule.prefixes and form.startswith(rule.prefixes):
            prefixed += [(prefix, form[len(prefix):]) for prefix in rule.prefixes
                         if form.startswith(prefix) and len(form) - len(prefix) >= rule.min_length]
        if rule.suffixes and form.endswith(rule.suffixes):
            suffixed += [(form, form[: -len(suffix)][: rule.stem]) for suffix in rule.suffixes
                         if form.endswith(suffix) and len(form) - len(suffix) >= rule.min_length]
    return (lower, lemma, tuple(prefixed), tuple(suffixed)) if prefixed or suffixed else None


def known_affixed(rule: Derivation, lower: str, lemma: str, pos: str, known) -> bool:
    """Check whether a token is affix + a known word under ``rule`` (its ``known_base`` reading).

    ``lower`` and ``lemma`` are lower-cased; ``known(word, pos)`` is the backend's lexicon (see
    :func:`diagnostics.annotate._backends.get_lexicon`). The token's part of speech ``pos`` must be one of
    ``rule.known_base`` (any when empty). After a prefix, the rest must be a known word of the token's part of
    speech (a prefix keeps it: un-happy); after a suffix, of any (care-less). The part left must keep
    ``rule.min_length`` characters.
    """
    if rule.known_base is None or rule.known_base and pos not in rule.known_base:
        return False
    for form in (lemma,) if lemma == lower else (lemma, lower):
        for prefix in rule.prefixes:
            if form.startswith(prefix) and len(form) - len(prefix) >= rule.min_length \
                    and known(form[len(prefix):], pos):
                return True
        for suffix in rule.suffixes:
            if form.endswith(suffix) and len(form) - len(suffix) >= rule.min_length \
                    and known(form[: -len(suffix)], None):
                return True
    return False


def derived(rule: FeatureRule, side: Analysis, other: Analysis) -> bool:
    """Check whether a word of ``side`` is affix + a word of ``other`` (and its base is absent from ``side``).

    ``rule`` is a feature with a ``derivation``.
    """
    candidates = side.affixed.get(rule.name, ())
    if not candidates or not other.tokens:
        return False
    own, other_forms, other_pos = side.forms, other.forms, rule.derivation.other_pos
    for lower, lemma, prefixed, suffixed in candidates:
        if lemma in other_forms or lower in other_forms:
            continue
        for prefix, base in prefixed:
            if base in other_forms and base not in own:
                return True
        for form, stem in suffixed:
            for _, o_lemma, o_pos in other.tokens:
                if (not other_pos or o_pos in other_pos) and o_lemma.startswith(stem) \
                        and o_lemma not in own and o_lemma != form:
                    return True
    return False
