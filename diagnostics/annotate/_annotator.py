"""The rules of one language compiled against its backend pipeline, and the analysis of sentences with them.

Token patterns run in :class:`~diagnostics.annotate._token_matcher.TokenMatcher` (spaCy's matches at a fraction of
the cost; spaCy's ``Matcher`` validates every pattern and runs the few the fast one does not support), word lists
in two ``PhraseMatcher`` objects (lower-cased forms and lemmas; one pass each per sentence); named entities and
derivational affixes add their own evidence. An affixed word whose base the backend's lexicon knows
(``known_base``) is evidence of its own sentence (``Analysis.known``); a feature's ``except`` patterns apply to it.
"""

from __future__ import annotations

import itertools

from ._derivation import affixed, known_affixed
from ._evidence import _WORD_LEMMA, EXCEPT, WORD_ATTRS, Analysis, PatternInfo, Word, resolve_hits, with_token_data
from ._pairs import combine_pair
from ._rules import FeatureRule, RulesError, RuleSet
from ._token_matcher import TokenMatcher


_KNOWN = 4  # of a Word: the features whose known_base derivation finds it an affix + a known word


def _entity_key(key: str, entity, words: list[Word]) -> str:
    """How a named entity is compared across the pair (``key`` of its rule): its label (``pattern``), its lower-case
    text (``lower``) or its lemmas (``lemma``: case forms of one name are one entity, Москва / Москвы)."""
    if key == "pattern":
        return entity.label_
    if key == "lower":
        return entity.text.lower()
    return " ".join(words[i][_WORD_LEMMA] for i in range(entity.start, entity.end))


class Annotator:
    """Rules of one language compiled against its backend pipeline.

    Parameters
    ----------
    rules : RuleSet
        Parsed rules (see :func:`diagnostics.annotate.load_rules`).
    surface_only : bool
        Analyse the texts with the backend's tokenizer alone, not its whole pipeline: for rules whose features are
        all read off lower-case word forms (:attr:`~diagnostics.annotate._rules.FeatureRule.surface_only`) and a
        presence reading, where lemmas, tags and parses would change nothing.

    Raises
    ------
    RulesError
        A feature uses entities the backend cannot find, or a pattern spaCy refuses.
    """

    def __init__(self, rules: RuleSet, surface_only: bool = False):
        """Load the backend pipeline and compile every feature's words and patterns into its matchers."""
        from spacy.matcher import Matcher, PhraseMatcher

        from ._backends import CONTEXT_FREE_BACKENDS, get_lexicon, get_pipeline

        self.rules = rules
        self.surface_only = surface_only
        self.nlp = get_pipeline(rules.backend, rules.language, rules.model, rules.exclude, rules.ner)
        # token patterns go to the fast matcher; spaCy's Matcher validates every pattern and keeps the few
        # the fast one does not support
        self.matcher = Matcher(self.nlp.vocab, validate=True)
        # (its per-word cache also keeps what the engine reads of each word: see _word)
        # (an added entity recogniser reads the context: patterns on ENT_TYPE are then not a function of the word)
        self.token_matcher = TokenMatcher(context_free=rules.backend in CONTEXT_FREE_BACKENDS and rules.ner is None,
                                          word_data=self._word, word_attrs=WORD_ATTRS)
        # word lists go to phrase matchers (one hash lookup per token instead of one pattern per word)
        self.word_matchers = {attr: PhraseMatcher(self.nlp.vocab, attr=attr) for attr in ("LOWER", "LEMMA")}
        self._info: dict[int, PatternInfo] = {}  # match id -> what a match of it means
        self._needs_tokens = any(r.derivation or r.min_overlap for r in rules.features.values())
        self._derivation_rules = [r for r in rules.features.values() if r.derivation is not None]
        self._known_rules = [r for r in self._derivation_rules if r.derivation.known_base is not None]
        self._affixes = (tuple(dict.fromkeys(a for r in self._derivation_rules for a in r.derivation.prefixes)),
                         tuple(dict.fromkeys(a for r in self._derivation_rules for a in r.derivation.suffixes)))
        self._known = get_lexicon(rules.backend, self.nlp) if self._known_rules else None
        if self._known_rules and self._known is None:
            raise RulesError(rules.path, self._known_rules[0].line,
                             f"feature {self._known_rules[0].name!r}: derivation known_base needs a lexicon, and "
                             f"backend {rules.backend!r} (model {rules.model!r}) has none; use the pymorphy3 "
                             "backend or a spaCy pipeline whose lemmatizer has a lemma index")
        self._entity_rules = [r for r in rules.features.values() if r.entities is not None]
        self._compile(rules)
        # the spaCy matchers that hold anything (an empty one warns when called)
        self._spacy_matchers = [m for m in (self.matcher, *self.word_matchers.values()) if len(m)]
        self._counted = {r.name: r.min_count for r in rules.features.values() if r.min_count > 1}
        self._rank = {feature: i for i, feature in enumerate(self.features)}

    def _compile(self, rules: RuleSet) -> None:
        """Add every feature's word list, patterns and ``except`` patterns to the matchers."""
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
        self._info[self.nlp.vocab.strings[key]] = PatternInfo(rule, "#words", len(self._info), False)

    def _add(self, rule: FeatureRule, name: str, pattern: list) -> None:
        """A token pattern: in the fast matcher where it supports the pattern, else in spaCy's ``Matcher``."""
        key = f"{rule.name}\t{name}"
        try:
            self.matcher.add(key, [pattern])
        except Exception as err:  # spaCy raises ValueError / MatchPatternError with its own wording
            raise RulesError(self.rules.path, rule.line, f"feature {rule.name!r}, pattern {name!r}: {err}") from None
        match_id = self.nlp.vocab.strings[key]
        if self.token_matcher.add(match_id, pattern):
            self.matcher.remove(key)
        self._info[match_id] = PatternInfo(rule, name, len(self._info), name.startswith(EXCEPT))

    @property
    def features(self) -> list[str]:
        """Canonical names of the detectable features, taxonomy order."""
        return self.rules.feature_names

    def analyse(self, doc) -> Analysis:
        """Collect the evidence of one analysed sentence.

        Parameters
        ----------
        doc : spacy.tokens.Doc
            A sentence analysed by :attr:`nlp`.

        Returns
        -------
        Analysis
            Its evidence per feature and, where rules need them, its token data.
        """
        return self._analyse(doc, *self.token_matcher.match(doc))

    def _analyse(self, doc, matches: list, words: list[Word]) -> Analysis:
        """:meth:`analyse`, given the token matcher's matches and word data of ``doc``."""
        for matcher in self._spacy_matchers:
            matches += matcher(doc)
        hits = resolve_hits(matches, self._info, words, doc)
        for rule in self._entity_rules:
            for entity in doc.ents:
                if not rule.entities or entity.label_ in rule.entities:
                    keys = hits.setdefault(rule.name, {})
                    key = _entity_key(rule.key, entity, words)
                    keys[key] = keys.get(key, 0) + 1
        if self._counted:
            hits = {f: keys for f, keys in hits.items()
                    if f not in self._counted or sum(keys.values()) >= self._counted[f]}
        known = self._known_hits(matches, words) if self._known_rules else {}
        if not self._needs_tokens:
            return Analysis(hits, known=known)
        return with_token_data(hits, words, known)

    def _known_hits(self, matches: list, words: list[Word]) -> dict[str, dict]:
        """The words that are an affix + a known word (``known_base``), per feature and lemma; the tokens of the
        feature's ``except`` matches are not evidence."""
        found = [(i, feature) for i, word in enumerate(words) for feature in word[_KNOWN]]
        if not found:
            return {}
        info = self._info
        excepted = {(info[m].rule.name, i) for m, start, end in matches if info[m].excepted for i in range(start, end)}
        known: dict[str, dict] = {}
        for i, feature in found:
            if (feature, i) not in excepted:
                keys = known.setdefault(feature, {})
                keys[words[i][_WORD_LEMMA]] = keys.get(words[i][_WORD_LEMMA], 0) + 1
        return known

    def analyse_texts(self, texts: list[str], batch_size: int = 64, progress: bool = False) -> dict[str, Analysis]:
        """Analyse every text (see :meth:`iter_analyses`).

        Parameters
        ----------
        texts : list of str
            The sentences.
        batch_size : int
            Texts per ``nlp.pipe`` batch.
        progress : bool
            Show a progress bar over the texts.

        Returns
        -------
        dict of str to Analysis
            Text -> its analysis.
        """
        return dict(self.iter_analyses(texts, batch_size, progress))

    def iter_analyses(self, texts: list[str], batch_size: int = 64, progress: bool = False):
        """Analyse texts in order, through ``nlp.pipe`` in batches of ``batch_size``.

        Parameters
        ----------
        texts : list of str
            The sentences.
        batch_size : int
            Texts per ``nlp.pipe`` batch.
        progress : bool
            Show a tqdm progress bar over the texts.

        Yields
        ------
        tuple of (str, Analysis)
            Each text with its analysis, in input order.
        """
        from tqdm.auto import tqdm

        docs = map(self.nlp.make_doc, texts) if self.surface_only else self.nlp.pipe(texts, batch_size=batch_size)
        with tqdm(total=len(texts), disable=not progress, desc=f"annotate {self.rules.language}", unit="text") as bar:
            # the rules run on a batch of analysed docs at a time: interleaved doc by doc with the backend's
            # dictionary lookups (each evicting the other's data from the CPU caches) they took ~1/6 longer
            for start in range(0, len(texts), batch_size):
                batch = list(itertools.islice(docs, batch_size))
                analysed = [(text, self._analyse(doc, matches, words)) for text, doc, (matches, words)
                            in zip(texts[start:start + batch_size], batch, self.token_matcher.pipe(batch))]
                bar.update(len(batch))
                yield from analysed

    def _word(self, token) -> Word:
        """What the engine reads of a token (a function of its text, lemma and part of speech: ``WORD_ATTRS``),
        computed once per word by the token matcher."""
        lower = token.lower_
        lemma = token.lemma_.lower() or lower
        if not token.is_alpha:
            return None, lower, lemma, (), ()
        pos = token.pos_
        found, known = [], []
        starts, ends = self._affixes  # most words carry no affix of any rule: one test for all of them
        if lemma.startswith(starts) or lower.startswith(starts) or lemma.endswith(ends) or lower.endswith(ends):
            for rule in self._derivation_rules:
                candidate = affixed(rule.derivation, lower, lemma, pos)
                if candidate:
                    found.append((rule.name, candidate))
            for rule in self._known_rules:
                if known_affixed(rule.derivation, lower, lemma, pos, self._known):
                    known.append(rule.name)
        return (lower, lemma, pos), lower, lemma, tuple(found), tuple(known)

    def clear_cache(self) -> None:
        """Forget every per-word result; what annotating a new corpus costs is then measured from scratch."""
        self.token_matcher.clear_cache()

    def combine(self, premise: Analysis, hypothesis: Analysis, presence: bool = False,
                modes: dict | None = None) -> dict[str, str]:
        """Find the features of a pair and their side (``premise``/``hypothesis``/``both``), taxonomy order.

        Parameters
        ----------
        premise, hypothesis : Analysis
            The analysed sentences (see :meth:`analyse`).
        presence : bool
            Count a feature when either sentence shows it (the plain "feature present" reading).
        modes : dict, optional
            Feature -> ``either``/``differ``/``swap``, overriding the rules' ``pair`` setting, e.g. to choose the
            combination per feature on held-out data (:func:`diagnostics.annotate.split_half`).

        Returns
        -------
        dict of str to str
            Feature -> side.
        """
        return combine_pair(self.rules, self._rank, premise, hypothesis, presence, modes)
