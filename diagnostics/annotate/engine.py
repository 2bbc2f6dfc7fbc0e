"""The annotation engine: run a backend pipeline over sentence pairs and detect diagnostic features.

Evidence per sentence comes from the token patterns of a rules file (spaCy ``Matcher`` syntax, run by
:class:`~diagnostics.annotate.token_matcher.TokenMatcher`, which gives spaCy's matches at a fraction of the cost;
spaCy's ``Matcher`` validates every pattern and runs the few the fast one does not support), from two
``PhraseMatcher`` objects holding its word lists (on lower-cased forms and on lemmas; one pass each per
sentence), from named entities, and, for derivational features, from the other sentence of the pair. Per
feature, the evidence of premise and hypothesis combines as the rules file says:

* ``pair: either``: the pair has the feature when either sentence shows it;
* ``pair: differ``: the pair has it when the evidence differs between the sentences (negation present in one
  side only, a different quantifier, a passive on one side only) — diagnostic pairs are minimal pairs whose
  inference hinges on that difference;
* ``pair: swap``: both sentences have evidence the other lacks (one named entity replaced by another).

``except`` patterns of a feature mark tokens that are not evidence (the particle in "что и", "всё" in "всё ещё");
``min_overlap`` asks that the two sentences share at least that share of their lemmas (a minimal pair);
``unless_swapped: F`` drops the feature when feature F's evidence is swapped across the pair.
"""

from __future__ import annotations

import itertools
from collections import Counter
import operator
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..taxonomy import COARSE, COARSE_OF
from .rules import Derivation, FeatureRule, RulesError, RuleSet, load_rules, rules_path
from .token_matcher import TokenMatcher

SIDES = {(True, False): "premise", (False, True): "hypothesis", (True, True): "both"}


class Analysis(NamedTuple):
    """What the engine keeps of one analysed sentence: its evidence and light token data."""

    #: feature -> evidence key (a lemma, a form or a pattern name, see ``key`` in the rules) -> count
    hits: dict
    #: (lower-case form, lemma, POS) of the alphabetic tokens, for derivations and lemma overlap
    tokens: tuple = ()
    lemmas: frozenset = frozenset()
    #: lemmas and lower-case forms
    forms: frozenset = frozenset()
    #: feature -> the tokens that carry one of its derivational affixes (see :func:`_affixed`); only features
    #: with such tokens
    affixed: dict = {}


class Annotator:
    """Rules of one language compiled against its backend pipeline.

    Parameters
    ----------
    rules : RuleSet
        Parsed rules (see :func:`diagnostics.annotate.rules.load_rules`).
    """

    def __init__(self, rules: RuleSet):
        from spacy.matcher import Matcher, PhraseMatcher

        from .backends import CONTEXT_FREE_BACKENDS, get_pipeline

        self.rules = rules
        self.nlp = get_pipeline(rules.backend, rules.language, rules.model, rules.exclude)
        # token patterns go to the fast matcher; spaCy's Matcher validates every pattern and keeps the few
        # the fast one does not support
        self.matcher = Matcher(self.nlp.vocab, validate=True)
        # (its per-word cache also keeps what the engine reads of each word: see _word)
        self.token_matcher = TokenMatcher(context_free=rules.backend in CONTEXT_FREE_BACKENDS, word_data=self._word,
                                          word_attrs=_WORD_ATTRS)
        # word lists go to phrase matchers (one hash lookup per token instead of one pattern per word)
        self.word_matchers = {attr: PhraseMatcher(self.nlp.vocab, attr=attr) for attr in ("LOWER", "LEMMA")}
        self._info: dict[int, _PatternInfo] = {}  # match id -> what a match of it means
        self._needs_tokens = any(r.derivation or r.min_overlap for r in rules.features.values())
        self._derivation_rules = [r for r in rules.features.values() if r.derivation is not None]
        self._affixes = (tuple(dict.fromkeys(a for r in self._derivation_rules for a in r.derivation.prefixes)),
                         tuple(dict.fromkeys(a for r in self._derivation_rules for a in r.derivation.suffixes)))
        self._entity_rules = [r for r in rules.features.values() if r.entities is not None]
        has_ner = "ner" in self.nlp.pipe_names
        for rule in rules.features.values():
            if rule.entities is not None and not has_ner:
                raise RulesError(rules.path, rule.line, f"feature {rule.name!r} uses entities but backend "
                                 f"{rules.backend!r} has no 'ner' component; use patterns instead")
            if rule.words:
                self._add_words(rule)
            for name, pattern in rule.patterns.items():
                self._add(rule, name, pattern)
            for name, pattern in rule.exceptions.items():
                self._add(rule, EXCEPT + name, pattern)
        # the spaCy matchers that hold anything (an empty one warns when called)
        self._spacy_matchers = [m for m in (self.matcher, *self.word_matchers.values()) if len(m)]
        self._counted = {r.name: r.min_count for r in rules.features.values() if r.min_count > 1}
        self._rank = {feature: i for i, feature in enumerate(self.features)}

    def _add_words(self, rule: FeatureRule) -> None:
        """A feature's word list as phrases of lower-cased forms or lemmas (``match``), split on spaces."""
        from spacy.tokens import Doc

        key = f"{rule.name}\t#words"
        phrases = []
        for word in rule.words:
            parts = word.lower().split()
            phrases.append(Doc(self.nlp.vocab, words=parts, lemmas=parts) if rule.match == "lemma"
                           else Doc(self.nlp.vocab, words=parts))
        self.word_matchers["LEMMA" if rule.match == "lemma" else "LOWER"].add(key, phrases)
        self._info[self.nlp.vocab.strings[key]] = _PatternInfo(rule, "#words", len(self._info), False)

    def _add(self, rule: FeatureRule, name: str, pattern: list) -> None:
        key = f"{rule.name}\t{name}"
        try:
            self.matcher.add(key, [pattern])
        except Exception as err:  # spaCy raises ValueError / MatchPatternError with its own wording
            raise RulesError(self.rules.path, rule.line, f"feature {rule.name!r}, pattern {name!r}: {err}") from None
        match_id = self.nlp.vocab.strings[key]
        if self.token_matcher.add(match_id, pattern):
            self.matcher.remove(key)
        self._info[match_id] = _PatternInfo(rule, name, len(self._info), name.startswith(EXCEPT))

    @property
    def features(self) -> list[str]:
        """Canonical names of the detectable features, taxonomy order."""
        return self.rules.feature_names

    def analyse(self, doc) -> Analysis:
        """Evidence of one analysed sentence (a spaCy ``Doc`` from :attr:`nlp`)."""
        return self._analyse(doc, *self.token_matcher.match(doc))

    def _analyse(self, doc, matches: list, words: list[_Word]) -> Analysis:
        """:meth:`analyse`, given the token matcher's matches and word data of ``doc``."""
        for matcher in self._spacy_matchers:
            matches += matcher(doc)
        spans: dict[str, list] = {}
        for match_id, start, end in matches:
            info = self._info[match_id]
            spans.setdefault(info.rule.name, []).append((start, end, info))
        hits = {}
        for feature, found in spans.items():
            if len(found) == 1:  # the common case: one span, nothing to resolve
                start, end, info = found[0]
                if not info.excepted:
                    hits[feature] = {_key(info, words, doc, start, end): 1}
                continue
            taken, keys = set(), {}
            for start, end, info in found:
                if info.excepted:
                    taken.update(range(start, end))
            # longest span first; of equal spans, the pattern listed first in the rules file
            for start, end, info in sorted(found, key=lambda s: (s[0] - s[1], s[0], s[2].order)):
                if not info.excepted and taken.isdisjoint(range(start, end)):
                    taken.update(range(start, end))
                    key = _key(info, words, doc, start, end)
                    keys[key] = keys.get(key, 0) + 1
            if keys:
                hits[feature] = keys
        for rule in self._entity_rules:
            for entity in doc.ents:
                if not rule.entities or entity.label_ in rule.entities:
                    keys = hits.setdefault(rule.name, {})
                    key = entity.text.lower()
                    keys[key] = keys.get(key, 0) + 1
        if self._counted:
            hits = {f: keys for f, keys in hits.items()
                    if f not in self._counted or sum(keys.values()) >= self._counted[f]}
        if not self._needs_tokens:
            return Analysis(hits)
        # (map/filter with item getters: no Python step per token)
        tokens = tuple(filter(None, map(_TOKEN, words)))
        lemmas = frozenset(map(_LEMMA, tokens))
        affixed: dict[str, list] = {}
        for word_affixed in filter(None, map(_AFFIXED, words)):
            for feature, candidate in word_affixed:
                affixed.setdefault(feature, []).append(candidate)
        return Analysis(hits, tokens, lemmas, lemmas.union(map(_LOWER, tokens)), affixed)

    def analyse_texts(self, texts: list[str], batch_size: int = 64, progress: bool = False) -> dict[str, Analysis]:
        """:meth:`analyse` of every text (see :meth:`iter_analyses`); text -> its analysis."""
        return dict(self.iter_analyses(texts, batch_size, progress))

    def iter_analyses(self, texts: list[str], batch_size: int = 64, progress: bool = False):
        """``(text, analysis)`` of every text in order, through ``nlp.pipe`` in batches of ``batch_size`` (a tqdm
        progress bar over the texts with ``progress``)."""
        from tqdm.auto import tqdm

        docs = self.nlp.pipe(texts, batch_size=batch_size)
        with tqdm(total=len(texts), disable=not progress, desc=f"annotate {self.rules.language}", unit="text") as bar:
            # the rules run on a batch of analysed docs at a time: interleaved doc by doc with the backend's
            # dictionary lookups (each evicting the other's data from the CPU caches) they took ~1/6 longer
            for start in range(0, len(texts), batch_size):
                batch = list(itertools.islice(docs, batch_size))
                analysed = [(text, self._analyse(doc, matches, words)) for text, doc, (matches, words)
                            in zip(texts[start:start + batch_size], batch, self.token_matcher.pipe(batch))]
                bar.update(len(batch))
                yield from analysed

    def _word(self, token) -> _Word:
        """What the engine reads of a token (a function of its text, lemma and part of speech: ``_WORD_ATTRS``),
        computed once per word by the token matcher."""
        lower = token.lower_
        lemma = token.lemma_.lower() or lower
        if not token.is_alpha:
            return None, lower, lemma, ()
        pos = token.pos_
        affixed = []
        starts, ends = self._affixes  # most words carry no affix of any rule: one test for all of them
        if lemma.startswith(starts) or lower.startswith(starts) or lemma.endswith(ends) or lower.endswith(ends):
            for rule in self._derivation_rules:
                found = _affixed(rule.derivation, lower, lemma, pos)
                if found:
                    affixed.append((rule.name, found))
        return (lower, lemma, pos), lower, lemma, tuple(affixed)

    def clear_cache(self) -> None:
        """Forget every per-word result; what annotating a new corpus costs is then measured from scratch."""
        self.token_matcher.clear_cache()

    def combine(self, premise: Analysis, hypothesis: Analysis, presence: bool = False,
                modes: dict | None = None) -> dict[str, str]:
        """Features of a pair and their side (``premise``/``hypothesis``/``both``), taxonomy order.

        ``modes`` (feature -> ``either``/``differ``/``swap``) overrides the rules' ``pair`` setting, e.g. to
        choose the combination per feature on held-out data (:func:`diagnostics.annotate.evaluation.split_half`).
        """
        out = {}
        overlap = None
        evidence = premise.hits.keys() | hypothesis.hits.keys()
        if premise.affixed or hypothesis.affixed:  # derived forms need affixed tokens on one side
            evidence |= premise.affixed.keys() | hypothesis.affixed.keys()
        for feature in sorted(evidence, key=self._rank.__getitem__):
            rule = self.rules.features[feature]
            pair = (modes or {}).get(feature, rule.pair)
            p = premise.hits.get(feature, _NONE)
            h = hypothesis.hits.get(feature, _NONE)
            contrast = pair in ("differ", "swap") and not presence
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
                derived_p = _derived(rule, premise, hypothesis)
                derived_h = _derived(rule, hypothesis, premise)
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


class _PatternInfo(NamedTuple):
    """A token pattern or word list of a feature, as its matches are read."""

    rule: FeatureRule
    name: str
    #: position in the rules file (the earlier pattern wins among equal spans)
    order: int
    #: an ``except`` pattern: its tokens are not evidence
    excepted: bool


#: What the engine reads of one token, computed once per word (see :meth:`Annotator._word`): a plain tuple
#: ``(token, lower, lemma, affixed)``, which the garbage collector stops tracking (a NamedTuple per word stays
#: tracked, and tens of thousands of them trigger extra full collections, ~0.2 s each on TERRa):
#:
#: * ``token``: (lower-case form, lemma, POS) of an alphabetic token, ``None`` for the others;
#: * ``lower``, ``lemma``: the lower-case form and lower-cased lemma (the form where the backend gives none);
#: * ``affixed``: ``(feature, candidate)`` for each derivation rule under which the token could be a derived
#:   form (see :func:`_affixed`).
_Word = tuple
_TOKEN, _AFFIXED = operator.itemgetter(0), operator.itemgetter(3)  # of a _Word
_WORD_LOWER, _WORD_LEMMA = 1, 2                                     # of a _Word
_LOWER, _LEMMA = operator.itemgetter(0), operator.itemgetter(1)    # of its token tuple


EXCEPT = "#except:"
_NONE: dict = {}  # shared empty evidence; never modified
_WORD_ATTRS = ("ORTH", "LEMMA", "POS")


def _combine_in_order(annotator: Annotator, premises: list[str], hypotheses: list[str], batch_size: int,
                      progress: bool, presence: bool) -> list[dict[str, str]]:
    """:meth:`Annotator.combine` of every pair, each as soon as both its texts are analysed; an analysis is kept
    only while a later pair still needs it (bounded memory on a large corpus, and far fewer long-lived objects
    for the garbage collector to walk: on TERRa that saved full collections of ~0.2 s each)."""
    pairs = list(zip(premises, hypotheses))
    texts = list(dict.fromkeys(itertools.chain.from_iterable(pairs)))  # each pair's texts next to each other
    uses = Counter(premises) + Counter(hypotheses)
    analyses, sides = {}, []
    for text, analysis in annotator.iter_analyses(texts, batch_size, progress):
        analyses[text] = analysis
        while len(sides) < len(pairs) and pairs[len(sides)][0] in analyses and pairs[len(sides)][1] in analyses:
            premise, hypothesis = pairs[len(sides)]
            sides.append(annotator.combine(analyses[premise], analyses[hypothesis], presence))
            for used in (premise, hypothesis):
                uses[used] -= 1
                if not uses[used]:
                    del analyses[used]
    return sides


def _exceeds(a: dict, b: dict) -> bool:
    """Whether evidence ``a`` has a key more often than ``b`` (``a - b`` is not empty, as multisets)."""
    if not b or not a:
        return bool(a)
    return any(count > b.get(key, 0) for key, count in a.items())


def _swapped(premise: Analysis, hypothesis: Analysis, feature: str) -> bool:
    """Whether each side has evidence of ``feature`` that the other lacks (one quantifier replaced by another)."""
    p, h = premise.hits.get(feature, _NONE), hypothesis.hits.get(feature, _NONE)
    return _exceeds(p, h) and _exceeds(h, p)


def _overlap(a: frozenset, b: frozenset) -> float:
    """Jaccard overlap of the lemma sets of two analysed sentences (0 when either is empty)."""
    return len(a & b) / len(a | b) if a and b else 0.0


def _key(info: _PatternInfo, words: list[_Word], doc, start: int, end: int) -> str:
    """How a hit on ``doc[start:end]`` is compared across the pair (``key`` of the rule)."""
    key = info.rule.key
    if key == "pattern" and info.name != "#words":
        return info.name
    if key != "lemma":
        return words[start][_WORD_LOWER] if end - start == 1 else doc[start:end].text.lower()
    lemmas = [words[i][_WORD_LEMMA] for i in range(start, end)]
    return lemmas[0] if end - start == 1 else " ".join(lemmas)


def _affixed(rule: Derivation, lower: str, lemma: str, pos: str) -> tuple | None:
    """A token that could be a derived form under ``rule``: ``(lower, lemma, prefixed, suffixed)`` with
    ``prefixed`` = ``(prefix, base)`` pairs and ``suffixed`` = ``(form, stem)`` pairs of the lemma and the
    lower-case form; ``None`` when it has neither."""
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


def _derived(rule: FeatureRule, side: Analysis, other: Analysis) -> bool:
    """Whether a word of ``side`` is affix + a word of ``other`` (and its base is absent from ``side``)."""
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


@lru_cache(maxsize=16)
def _cached_annotator(path: str, mtime_ns: int) -> Annotator:
    return Annotator(load_rules(Path(path)))


def get_annotator(lang: str | Path) -> Annotator:
    """The compiled annotator of a language code or rules file (cached; reloaded when the file changes)."""
    path = rules_path(lang).resolve()
    return _cached_annotator(str(path), path.stat().st_mtime_ns)


def supported_features(lang: str | Path) -> list[str]:
    """Canonical fine-grained features the rules of ``lang`` detect (taxonomy order).

    Parameters
    ----------
    lang : str or Path
        Language code with a bundled rules file, or a rules file path.
    """
    return load_rules(lang).feature_names


def annotate(frame: pd.DataFrame, lang: str | Path, *, batch_size: int = 64, progress: bool = False,
             presence: bool = False) -> pd.DataFrame:
    """Annotate sentence pairs with diagnostic features by rules.

    Parameters
    ----------
    frame : pandas.DataFrame
        Must have ``premise`` and ``hypothesis`` text columns (e.g. from :func:`diagnostics.data.load`).
    lang : str or Path
        Language code (``en``, ``ru``, ``fr``, ``de``, ``sv``) or the path of a rules file.
    batch_size : int
        Texts per ``nlp.pipe`` batch.
    progress : bool
        Show a tqdm progress bar over the distinct texts.
    presence : bool
        When true, a feature counts if either sentence shows it, ignoring ``pair: differ`` in the rules
        (the plain "feature present" reading, used for training-data distributions).

    Returns
    -------
    pandas.DataFrame
        A copy of ``frame`` with ``auto_features`` (canonical fine names, taxonomy order), ``auto_coarse``
        (their coarse categories) and ``feature_sides`` (feature -> ``premise``/``hypothesis``/``both``).

    Raises
    ------
    ValueError
        When ``premise`` or ``hypothesis`` is missing, or ``batch_size`` < 1.
    """
    missing = [c for c in ("premise", "hypothesis") if c not in frame.columns]
    if missing:
        raise ValueError(f"annotate needs columns premise and hypothesis; missing {', '.join(missing)} "
                         f"(found {', '.join(map(str, frame.columns))})")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, found {batch_size}")
    annotator = get_annotator(lang)
    premises = frame["premise"].fillna("").astype(str).tolist()
    hypotheses = frame["hypothesis"].fillna("").astype(str).tolist()
    sides = _combine_in_order(annotator, premises, hypotheses, batch_size, progress, presence)
    out = frame.copy()
    out["auto_features"] = [list(s) for s in sides]
    coarse = [{COARSE_OF[f] for f in s} for s in sides]
    out["auto_coarse"] = [[c for c in COARSE if c in found] for found in coarse]
    out["feature_sides"] = sides
    return out


