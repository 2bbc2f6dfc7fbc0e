"""What the engine keeps of an analysed sentence, and how the matches of its rules become evidence.

Evidence of a feature is a multiset: evidence key (a lemma, a form or a pattern name, see ``key`` in the rules)
-> count. Per sentence the engine also keeps light token data, for derivations and lemma overlap.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

from ._rules import FeatureRule

#: Prefix of the names of a feature's ``except`` patterns (their tokens are not evidence).
EXCEPT = "#except:"
#: Shared empty evidence; never modified.
NO_EVIDENCE: dict = {}
#: The token attributes a word's data is a function of (the token matcher caches per distinct values).
WORD_ATTRS = ("ORTH", "LEMMA", "POS")


class Analysis(NamedTuple):
    """What the engine keeps of one analysed sentence: its evidence and light token data.

    Parameters
    ----------
    hits : dict
        Feature -> evidence key (a lemma, a form or a pattern name, see ``key`` in the rules) -> count.
    tokens : tuple
        (lower-case form, lemma, POS) of the alphabetic tokens, for derivations and lemma overlap.
    lemmas : frozenset
        Lemmas of those tokens.
    forms : frozenset
        Their lemmas and lower-case forms.
    affixed : dict
        Feature -> the tokens that carry one of its derivational affixes (see
        :func:`diagnostics.annotate._derivation.affixed`); only features with such tokens.
    known : dict
        Feature -> lemma -> count of the words that are one of its affixes + a word the lexicon knows (``known_base``:
        evidence of this sentence alone, see :func:`diagnostics.annotate._derivation.known_affixed`).
    """

    hits: dict
    tokens: tuple = ()
    lemmas: frozenset = frozenset()
    forms: frozenset = frozenset()
    affixed: dict = {}
    known: dict = {}


class PatternInfo(NamedTuple):
    """A token pattern or word list of a feature, as its matches are read.

    Parameters
    ----------
    rule : FeatureRule
        The feature's rule.
    name : str
        The pattern's name (``#words`` for the word list, prefixed by :data:`EXCEPT` for an ``except`` pattern).
    order : int
        Position in the rules file (the earlier pattern wins among equal spans).
    excepted : bool
        An ``except`` pattern: its tokens are not evidence.
    """

    rule: FeatureRule
    name: str
    order: int
    excepted: bool


#: What the engine reads of one token, computed once per word (see :meth:`Annotator._word
#: <diagnostics.annotate._annotator.Annotator._word>`): a plain tuple ``(token, lower, lemma, affixed, known)``, which the
#: garbage collector stops tracking (a NamedTuple per word stays tracked, and tens of thousands of them trigger
#: extra full collections, ~0.2 s each on TERRa):
#:
#: * ``token``: (lower-case form, lemma, POS) of an alphabetic token, ``None`` for the others;
#: * ``lower``, ``lemma``: the lower-case form and lower-cased lemma (the form where the backend gives none);
#: * ``affixed``: ``(feature, candidate)`` for each derivation rule under which the token could be a derived
#:   form (see :func:`diagnostics.annotate._derivation.affixed`);
#: * ``known``: the features whose ``known_base`` derivation finds the token an affix + a known word (see
#:   :func:`diagnostics.annotate._derivation.known_affixed`).
Word = tuple
_TOKEN, _AFFIXED = operator.itemgetter(0), operator.itemgetter(3)  # of a Word
_WORD_LOWER, _WORD_LEMMA = 1, 2                                     # of a Word
_LOWER, _LEMMA = operator.itemgetter(0), operator.itemgetter(1)    # of its token tuple


def resolve_hits(matches: list, info: dict[int, PatternInfo], words: list[Word], doc) -> dict[str, dict]:
    """Turn the matches of a sentence into evidence per feature: feature -> evidence key -> count.

    ``matches`` holds ``(match id, start, end)`` of every matcher, ``info`` what each match id stands for. Of
    overlapping spans of one feature the longest wins (of equal spans, the pattern listed first in the rules file);
    tokens of an ``except`` match are not evidence. Only features with evidence are returned.
    """
    spans: dict[str, list] = {}
    for match_id, start, end in matches:
        pattern = info[match_id]
        spans.setdefault(pattern.rule.name, []).append((start, end, pattern))
    hits = {}
    for feature, found in spans.items():
        if len(found) == 1:  # the common case: one span, nothing to resolve
            start, end, pattern = found[0]
            if not pattern.excepted:
                hits[feature] = {evidence_key(pattern, words, doc, start, end): 1}
            continue
        taken, keys = set(), {}
        for start, end, pattern in found:
            if pattern.excepted:
                taken.update(range(start, end))
        # longest span first; of equal spans, the pattern listed first in the rules file
        for start, end, pattern in sorted(found, key=lambda s: (s[0] - s[1], s[0], s[2].order)):
            if not pattern.excepted and taken.isdisjoint(range(start, end)):
                taken.update(range(start, end))
                key = evidence_key(pattern, words, doc, start, end)
                keys[key] = keys.get(key, 0) + 1
        if keys:
            hits[feature] = keys
    return hits


def evidence_key(info: PatternInfo, words: list[Word], doc, start: int, end: int) -> str:
    """Give the key by which a hit on ``doc[start:end]`` is compared across the pair (``key`` of the rule).

    That is the pattern's name (``key: pattern``), the span's lower-case text (``key: form``) or its lemmas
    (``key: lemma``).
    """
    key = info.rule.key
    if key == "pattern" and info.name != "#words":
        return info.name
    if key != "lemma":
        return words[start][_WORD_LOWER] if end - start == 1 else doc[start:end].text.lower()
    lemmas = [words[i][_WORD_LEMMA] for i in range(start, end)]
    return lemmas[0] if end - start == 1 else " ".join(lemmas)


def with_token_data(hits: dict, words: list[Word], known: dict) -> Analysis:
    """Build the analysis of a sentence with its token data (for derivations and lemma overlap).

    It holds ``hits`` with the alphabetic tokens, their lemmas, lemmas and forms, the affixed tokens per feature and
    the one-sentence derivational evidence ``known``.
    """
    # (map/filter with item getters: no Python step per token)
    tokens = tuple(filter(None, map(_TOKEN, words)))
    lemmas = frozenset(map(_LEMMA, tokens))
    affixed: dict[str, list] = {}
    for word_affixed in filter(None, map(_AFFIXED, words)):
        for feature, candidate in word_affixed:
            affixed.setdefault(feature, []).append(candidate)
    return Analysis(hits, tokens, lemmas, lemmas.union(map(_LOWER, tokens)), affixed, known)
