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

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..taxonomy import COARSE, COARSE_OF
from .rules import Derivation, FeatureRule, RulesError, RuleSet, load_rules, rules_path
from .token_matcher import TokenMatcher

SIDES = {(True, False): "premise", (False, True): "hypothesis", (True, True): "both"}


@dataclass(frozen=True)
class Analysis:
    """What the engine keeps of one analysed sentence: feature -> evidence keys, and light token data."""

    hits: dict
    #: (lower-case form, lemma, POS) of the alphabetic tokens, for derivations and lemma overlap
    tokens: tuple = ()
    lemmas: frozenset = frozenset()
    #: lemmas and lower-case forms
    forms: frozenset = frozenset()
    #: feature -> the tokens that carry one of its derivational affixes (see :func:`_affixed`)
    affixed: dict = field(default_factory=dict)


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
        self.token_matcher = TokenMatcher(context_free=rules.backend in CONTEXT_FREE_BACKENDS)
        # word lists go to phrase matchers (one hash lookup per token instead of one pattern per word)
        self.word_matchers = {attr: PhraseMatcher(self.nlp.vocab, attr=attr) for attr in ("LOWER", "LEMMA")}
        self._info: dict[int, tuple[str, str, int]] = {}  # match id -> feature, pattern name, order in the file
        self._needs_tokens = any(r.derivation or r.min_overlap for r in rules.features.values())
        self._derivation_rules = [r for r in rules.features.values() if r.derivation is not None]
        self._derived_features = frozenset(r.name for r in self._derivation_rules)
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
        self._info[self.nlp.vocab.strings[key]] = (rule.name, "#words", len(self._info))

    def _add(self, rule: FeatureRule, name: str, pattern: list) -> None:
        key = f"{rule.name}\t{name}"
        try:
            self.matcher.add(key, [pattern])
        except Exception as err:  # spaCy raises ValueError / MatchPatternError with its own wording
            raise RulesError(self.rules.path, rule.line, f"feature {rule.name!r}, pattern {name!r}: {err}") from None
        match_id = self.nlp.vocab.strings[key]
        if self.token_matcher.add(match_id, pattern):
            self.matcher.remove(key)
        self._info[match_id] = (rule.name, name, len(self._info))

    @property
    def features(self) -> list[str]:
        """Canonical names of the detectable features, taxonomy order."""
        return self.rules.feature_names

    def analyse(self, doc) -> Analysis:
        """Evidence of one analysed sentence (a spaCy ``Doc`` from :attr:`nlp`)."""
        spans: dict[str, list] = {}
        matches = self.token_matcher(doc)
        for matcher in (self.matcher, *self.word_matchers.values()):
            if len(matcher):  # an empty matcher warns when called
                matches += matcher(doc)
        for match_id, start, end in matches:
            feature, name, order = self._info[match_id]
            spans.setdefault(feature, []).append((start, end, name, order))
        hits = {}
        for feature, found in spans.items():
            rule = self.rules.features[feature]
            taken, keys = set(), Counter()
            for start, end, name, _ in found:
                if name.startswith(EXCEPT):
                    taken.update(range(start, end))
            # longest span first; of equal spans, the pattern listed first in the rules file
            for start, end, name, _ in sorted(found, key=lambda s: (s[0] - s[1], s[0], s[3])):
                if not name.startswith(EXCEPT) and taken.isdisjoint(range(start, end)):
                    taken.update(range(start, end))
                    keys[_key(rule, doc, start, end, name)] += 1
            hits[feature] = keys
        for rule in self._entity_rules:
            ents = Counter(e.text.lower() for e in doc.ents if not rule.entities or e.label_ in rule.entities)
            if ents:
                hits[rule.name] = hits.get(rule.name, Counter()) + ents
        hits = {f: keys for f, keys in hits.items()
                if self.rules.features[f].min_count == 1 or keys.total() >= self.rules.features[f].min_count}
        if not self._needs_tokens:
            return Analysis(hits)
        tokens = tuple((t.lower_, t.lemma_.lower() or t.lower_, t.pos_) for t in doc if t.is_alpha)
        lemmas = frozenset(lemma for _, lemma, _ in tokens)
        affixed = {rule.name: _affixed(rule.derivation, tokens) for rule in self._derivation_rules}
        return Analysis(hits, tokens, lemmas, lemmas.union(lower for lower, _, _ in tokens), affixed)

    def combine(self, premise: Analysis, hypothesis: Analysis, presence: bool = False,
                modes: dict | None = None) -> dict[str, str]:
        """Features of a pair and their side (``premise``/``hypothesis``/``both``), taxonomy order.

        ``modes`` (feature -> ``either``/``differ``/``swap``) overrides the rules' ``pair`` setting, e.g. to
        choose the combination per feature on held-out data (:func:`diagnostics.annotate.evaluation.split_half`).
        """
        out = {}
        overlap = None
        evidence = premise.hits.keys() | hypothesis.hits.keys() | self._derived_features
        for feature in self.features:
            if feature not in evidence:
                continue
            rule = self.rules.features[feature]
            pair = (modes or {}).get(feature, rule.pair)
            p = premise.hits.get(feature, _NONE)
            h = hypothesis.hits.get(feature, _NONE)
            # (dict equality: Counter's own __eq__ is a slow Python loop, and hits hold positive counts only)
            if rule.derivation is None and (dict.__eq__(p, h) if pair in ("differ", "swap") and not presence
                                            else not p and not h):
                continue  # no evidence, or the same on both sides where only a difference counts
            if rule.min_overlap and not presence:
                if overlap is None:
                    overlap = _overlap(premise.lemmas, hypothesis.lemmas)
                if overlap < rule.min_overlap:
                    continue
            if rule.unless_swapped and not presence and _swapped(premise, hypothesis, rule.unless_swapped):
                continue
            derived_p = derived_h = _NONE
            if rule.derivation is not None:
                derived_p = _derived(rule, premise, hypothesis)
                derived_h = _derived(rule, hypothesis, premise)
            if pair in ("differ", "swap") and not presence:
                p, h = p - h, h - p
                # a derived form is already a relation across the pair (слоновью ~ слона): no swap needed
                if pair == "swap" and not (p and h) and not (derived_p or derived_h):
                    continue
            if derived_p or derived_h:
                p, h = p + derived_p, h + derived_h
            side = SIDES.get((bool(p), bool(h)))
            if side:
                out[feature] = side
        return out


EXCEPT = "#except:"
_NONE: Counter = Counter()  # shared empty evidence; never modified (Counter arithmetic returns new objects)


def _swapped(premise: Analysis, hypothesis: Analysis, feature: str) -> bool:
    """Whether each side has evidence of ``feature`` that the other lacks (one quantifier replaced by another)."""
    p, h = premise.hits.get(feature, _NONE), hypothesis.hits.get(feature, _NONE)
    return bool(p - h) and bool(h - p)


def _overlap(a: frozenset, b: frozenset) -> float:
    """Jaccard overlap of the lemma sets of two analysed sentences (0 when either is empty)."""
    return len(a & b) / len(a | b) if a and b else 0.0


def _key(rule: FeatureRule, doc, start: int, end: int, name: str) -> str:
    """How a hit on ``doc[start:end]`` is compared across the pair (``key`` of the rule)."""
    if rule.key == "pattern" and name != "#words":
        return name
    if rule.key != "lemma":
        return doc[start].lower_ if end - start == 1 else doc[start:end].text.lower()
    return " ".join(t.lemma_.lower() or t.lower_ for t in (doc[i] for i in range(start, end)))


def _affixed(rule: Derivation, tokens: tuple) -> tuple:
    """Tokens of one sentence that could be derived forms under ``rule``, computed once per sentence:
    ``(lower, lemma, prefixed, suffixed)`` with ``prefixed`` = ``(prefix, base)`` pairs and ``suffixed`` =
    ``(form, stem)`` pairs of the lemma and the lower-case form (only tokens with at least one of them)."""
    out = []
    for lower, lemma, pos in tokens:
        if rule.pos and pos not in rule.pos:
            continue
        prefixed, suffixed = [], []
        for form in {lemma, lower}:
            if rule.prefixes and form.startswith(rule.prefixes):
                prefixed += [(prefix, form[len(prefix):]) for prefix in rule.prefixes
                             if form.startswith(prefix) and len(form) - len(prefix) >= rule.min_length]
            if rule.suffixes and form.endswith(rule.suffixes):
                suffixed += [(form, form[: -len(suffix)][: rule.stem]) for suffix in rule.suffixes
                             if form.endswith(suffix) and len(form) - len(suffix) >= rule.min_length]
        if prefixed or suffixed:
            out.append((lower, lemma, tuple(prefixed), tuple(suffixed)))
    return tuple(out)


def _derived(rule: FeatureRule, side: Analysis, other: Analysis) -> Counter:
    """Words of ``side`` that are affix + a word of ``other`` (and whose base is absent from ``side``)."""
    hits = Counter()
    candidates = side.affixed.get(rule.name, ())
    if not candidates or not other.tokens:
        return hits
    own, other_forms, other_pos = side.forms, other.forms, rule.derivation.other_pos
    for lower, lemma, prefixed, suffixed in candidates:
        if lemma in other_forms or lower in other_forms:
            continue
        for prefix, base in prefixed:
            if base in other_forms and base not in own:
                hits[f"{prefix}-{base}"] += 1
        for form, stem in suffixed:
            for _, o_lemma, o_pos in other.tokens:
                if (not other_pos or o_pos in other_pos) and o_lemma.startswith(stem) \
                        and o_lemma not in own and o_lemma != form:
                    hits[f"{form}~{o_lemma}"] += 1
                    break
    return hits


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
    from tqdm.auto import tqdm

    missing = [c for c in ("premise", "hypothesis") if c not in frame.columns]
    if missing:
        raise ValueError(f"annotate needs columns premise and hypothesis; missing {', '.join(missing)} "
                         f"(found {', '.join(map(str, frame.columns))})")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, found {batch_size}")
    annotator = get_annotator(lang)
    premises = frame["premise"].fillna("").astype(str).tolist()
    hypotheses = frame["hypothesis"].fillna("").astype(str).tolist()
    unique = list(dict.fromkeys(premises + hypotheses))
    analyses = {}
    docs = annotator.nlp.pipe(unique, batch_size=batch_size)
    for text, doc in tqdm(zip(unique, docs), total=len(unique), disable=not progress,
                          desc=f"annotate {annotator.rules.language}", unit="text"):
        analyses[text] = annotator.analyse(doc)
    sides = [annotator.combine(analyses[p], analyses[h], presence) for p, h in zip(premises, hypotheses)]
    out = frame.copy()
    out["auto_features"] = [list(s) for s in sides]
    out["auto_coarse"] = [[c for c in COARSE if any(COARSE_OF[f] == c for f in s)] for s in sides]
    out["feature_sides"] = sides
    return out


