"""Combine the evidence of premise and hypothesis into the features of a pair (``pair: either|differ|swap``)."""

from __future__ import annotations

from ._derivation import derived
from ._evidence import NO_EVIDENCE, Analysis
from ._rules import RuleSet

SIDES = {(True, False): "premise", (False, True): "hypothesis", (True, True): "both"}


def combine_pair(rules: RuleSet, rank: dict[str, int], premise: Analysis, hypothesis: Analysis,
                 presence: bool = False, modes: dict | None = None) -> dict[str, str]:
    """Find the features of a pair and their side (``premise``/``hypothesis``/``both``), in taxonomy order.

    ``rank`` gives the position of every feature of ``rules`` in taxonomy order. ``presence`` counts a feature when
    either sentence shows it, ignoring ``differ`` / ``swap``, ``min_overlap`` and ``unless_swapped``. ``modes`` maps
    feature -> ``either``/``differ``/``swap``, overriding the rules' ``pair`` setting. Returns feature -> side.
    """
    out = {}
    overlap = None
    evidence = premise.hits.keys() | hypothesis.hits.keys()
    if premise.affixed or hypothesis.affixed:  # derived forms need affixed tokens on one side
        evidence |= premise.affixed.keys() | hypothesis.affixed.keys()
    rules_known = premise.known.keys() | hypothesis.known.keys()
    evidence |= rules_known
    for feature in sorted(evidence, key=rank.__getitem__):
        rule = rules.features[feature]
        pair = (modes or {}).get(feature, rule.pair)
        p = premise.hits.get(feature, NO_EVIDENCE)
        h = hypothesis.hits.get(feature, NO_EVIDENCE)
        contrast = pair in ("differ", "swap") and not presence
        if not contrast and feature in rules_known:
            # the one-sentence reading: an affix + a word the lexicon knows is evidence of its own sentence
            p = p or premise.known.get(feature, NO_EVIDENCE)
            h = h or hypothesis.known.get(feature, NO_EVIDENCE)
        if rule.derivation is None and (p == h if contrast else not p and not h):
            continue  # no evidence, or the same on both sides where only a difference counts
        if rule.min_overlap and not presence:
            if overlap is None:
                overlap = _overlap(premise.lemmas, hypothesis.lemmas)
            if overlap < rule.min_overlap:
                continue
        if rule.unless_swapped and not presence and _swapped(premise, hypothesis, rule.unless_swapped):
            continue
        derived_p = derived_h = False
        if rule.derivation is not None:
            derived_p = derived(rule, premise, hypothesis)
            derived_h = derived(rule, hypothesis, premise)
        if contrast:
            # only the evidence one side has beyond the other counts
            p, h = _exceeds(p, h), _exceeds(h, p)
            # a derived form is already a relation across the pair (слоновью ~ слона): no swap needed
            if pair == "swap" and not (p and h) and not (derived_p or derived_h):
                continue
        side = SIDES.get((bool(p) or derived_p, bool(h) or derived_h))
        if side:
            out[feature] = side
    return out


def _exceeds(a: dict, b: dict) -> bool:
    """Whether evidence ``a`` has a key more often than ``b`` (``a - b`` is not empty, as multisets)."""
    if not b or not a:
        return bool(a)
    return any(count > b.get(key, 0) for key, count in a.items())


def _swapped(premise: Analysis, hypothesis: Analysis, feature: str) -> bool:
    """Whether each side has evidence of ``feature`` that the other lacks (one quantifier replaced by another)."""
    p, h = premise.hits.get(feature, NO_EVIDENCE), hypothesis.hits.get(feature, NO_EVIDENCE)
    return _exceeds(p, h) and _exceeds(h, p)


def _overlap(a: frozenset, b: frozenset) -> float:
    """Jaccard overlap of the lemma sets of two analysed sentences (0 when either is empty)."""
    return len(a & b) / len(a | b) if a and b else 0.0
