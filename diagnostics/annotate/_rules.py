"""Read and validate an annotator rules file (``annotators/<lang>.yaml``).

A rules file is data a linguist edits: the backend that analyses the text, named word lists, and per
diagnostic feature the evidence (word lists, spaCy ``Matcher`` token patterns with morphological conditions,
named-entity labels, derivational affixes) plus how the evidence of the two sentences of a pair combines.
The format is described in ``annotators/README.md``. Every error names the file and line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.errors import UserInputError
from ..core.resources import annotators_dir
from ..core.taxonomy import FINE, UnknownCategoryError, canonical_fine
from ..core.yaml_lines import YAMLLineError, load_yaml_lines
from ..core.yaml_lines import plain as _plain

PAIR_MODES = ("either", "differ", "swap")
KEY_MODES = ("lemma", "lower", "pattern")
MATCH_ATTRS = ("lower", "lemma")
BACKENDS = ("spacy", "pymorphy3", "hanta", "simplemma", "blank")
#: Entity recognisers a rules file can add to a pipeline without one (``ner:``); see ``diagnostics/annotate/_backends.py``.
NER_RECOGNISERS = ("natasha",)
LIST_REF = re.compile(r"^\$[A-Za-z_]\w*$")  # "$negators"; "$." (an STTS tag) is a plain value
TOP_KEYS = {"language", "backend", "model", "exclude", "ner", "description", "lists", "features", "min_overlap"}
FEATURE_KEYS = {"pair", "key", "min_count", "words", "match", "patterns", "except", "entities", "derivation", "note",
                "min_overlap", "unless_swapped"}
DERIVATION_KEYS = {"prefixes", "suffixes", "pos", "other_pos", "stem", "min_length", "known_base"}


class RulesError(UserInputError):
    """A rules file is malformed; the message reads ``file:line: what is wrong``.

    Parameters
    ----------
    path : str or Path
        The rules file (kept as ``path``).
    line : int or None
        1-based line of the problem (kept as ``line``); None when unknown.
    message : str
        What is wrong.
    """

    def __init__(self, path: str | Path, line: int | None, message: str):
        self.path, self.line = str(path), line
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Derivation:
    """Affix evidence: a word = affix + a word of the other sentence; with ``known_base``, also in one sentence.

    Across the pair, ``prefixes`` (morphological negation: *un*-affordable vs affordable) compare whole lemmas;
    ``suffixes`` (nominalisation: destruct-*ion* vs destroy) compare the first ``stem`` characters of the stripped
    word with a word of part of speech ``other_pos`` on the other side.

    With ``known_base``, a word is also evidence of its own sentence when the word left once the affix is removed
    is one the backend's lexicon knows (spaCy's lemma index, pymorphy3's dictionary): with the word's own part of
    speech after a prefix (un-happy), with any after a suffix (care-less). That one-sentence evidence serves the
    readings that look at each sentence alone (``presence``, ``pair: either``); the pair reading (``differ`` /
    ``swap``) still asks for the base in the other sentence, which is what makes a minimal pair hinge on the affix.

    Parameters
    ----------
    prefixes : tuple of str
        Prefixes whose removal leaves a word of the other sentence.
    suffixes : tuple of str
        Suffixes whose removal leaves a stem that starts a lemma of the other sentence.
    pos : tuple of str
        Parts of speech the derived word may have (empty: any).
    other_pos : tuple of str
        Parts of speech the base word on the other side may have (empty: any; suffixes only).
    stem : int
        Characters of the stripped word compared with the other side's lemmas (suffixes only).
    min_length : int
        Characters that must remain once the affix is removed.
    known_base : tuple of str or None
        Parts of speech of the words checked against the lexicon in one sentence (empty: any); None: no such check.
    """

    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    pos: tuple[str, ...] = ()
    other_pos: tuple[str, ...] = ()
    stem: int = 5
    min_length: int = 4
    known_base: tuple[str, ...] | None = None


@dataclass(frozen=True)
class FeatureRule:
    """Evidence for one diagnostic feature, compiled from one ``features:`` entry of a rules file.

    The keys are described in ``annotators/README.md``.

    Parameters
    ----------
    name : str
        Canonical fine category name.
    line : int
        Line of the entry in the rules file.
    pair : {"either", "differ", "swap"}
        How the evidence of the two sentences combines: a sentence shows it, the hits differ between the
        sentences, or both sides have hits the other lacks.
    key : {"lemma", "lower", "pattern"}
        How hits are compared across the sides.
    min_count : int
        Hits a sentence needs.
    match : {"lower", "lemma"}
        Token attribute the ``words`` are matched on.
    words : tuple of str
        Words or multi-word phrases (``$list`` references expanded).
    patterns : dict
        Pattern name -> spaCy ``Matcher`` token pattern (``$list`` references substituted).
    entities : tuple of str or None
        Named-entity labels counted as evidence (empty: every label); None: entities are not evidence.
    derivation : Derivation or None
        Affix evidence across the pair.
    exceptions : dict
        Pattern name -> token pattern whose tokens are not evidence (the ``except`` key).
    min_overlap : float
        The pair has the feature only when the sentences share at least this share of their lemmas (Jaccard).
    unless_swapped : str or None
        Another feature of the file whose swapped evidence cancels this one.
    """

    name: str
    line: int
    pair: str = "either"
    key: str = "lemma"
    min_count: int = 1
    match: str = "lower"
    words: tuple[str, ...] = ()
    patterns: dict = field(default_factory=dict)
    entities: tuple[str, ...] | None = None
    derivation: Derivation | None = None
    #: token patterns whose tokens are not evidence (particle "и" in "что и"; "всё" in "всё ещё")
    exceptions: dict = field(default_factory=dict)
    #: the pair has the feature only when the two sentences share at least this share of their lemmas
    #: (Jaccard); 0 = no condition. Ignored with ``presence=True``.
    min_overlap: float = 0.0
    #: another feature of the file: this one does not count when that feature's evidence is swapped across the
    #: pair (a universal replaced by another quantifier is Quantifiers, not the logic of the universal)
    unless_swapped: str | None = None

    @property
    def surface_only(self) -> bool:
        """Whether a sentence shows this feature by its words' lower-case forms alone (a word list matched on
        ``lower``; no patterns, exceptions, entities or derivations): its presence then needs only a tokenizer."""
        return (self.match == "lower" and not self.patterns and not self.exceptions and self.entities is None
                and self.derivation is None)


@dataclass(frozen=True)
class RuleSet:
    """A parsed rules file: backend configuration plus one :class:`FeatureRule` per feature.

    Parameters
    ----------
    path : str
        The rules file.
    language : str
        ISO code of the texts.
    backend : str
        One of :data:`BACKENDS`.
    model : str or None
        The spaCy pipeline, HanTa model or simplemma language the backend loads.
    exclude : tuple of str
        spaCy components not to load.
    lists : dict
        Word-list name -> its words (references expanded).
    features : dict
        Canonical feature name -> :class:`FeatureRule`.
    ner : str or None
        Entity recogniser added to a pipeline without one (``natasha`` for ru); None: none added.
    """

    path: str
    language: str
    backend: str
    model: str | None
    exclude: tuple[str, ...]
    lists: dict
    features: dict
    ner: str | None = None

    @property
    def feature_names(self) -> list[str]:
        """Canonical names of the features these rules detect, in taxonomy order."""
        return [f for f in FINE if f in self.features]

    def only(self, features) -> RuleSet:
        """Cut these rules down to some features and the features their ``unless_swapped`` reads.

        Parameters
        ----------
        features : sequence of str
            Canonical fine category names.

        Returns
        -------
        RuleSet
            The same file's settings with only those features' rules.

        Raises
        ------
        KeyError
            Naming the features the file has no rule for.
        """
        missing = [f for f in features if f not in self.features]
        if missing:
            raise KeyError(f"{self.path} has no rule for {', '.join(missing)}; it has rules for "
                           f"{', '.join(self.feature_names)}")
        kept = set(features) | {self.features[f].unless_swapped for f in features} - {None}
        return replace(self, features={name: rule for name, rule in self.features.items() if name in kept})


def annotators_root() -> Path:
    """Locate the folder with the bundled rules files.

    Returns
    -------
    Path
        ``$DIAGNOSTICS_ANNOTATORS`` when set, else :func:`diagnostics.core.resources.annotators_dir`.
    """
    override = os.environ.get("DIAGNOSTICS_ANNOTATORS")
    return Path(override) if override else annotators_dir()


def available_languages() -> list[str]:
    """List the language codes with a rules file ``<code>.yaml`` in :func:`annotators_root`.

    Returns
    -------
    list of str
        Sorted codes.
    """
    return sorted(p.stem for p in annotators_root().glob("*.yaml"))


def rules_path(lang: str | Path) -> Path:
    """Resolve a language code (``"en"``) or a path to a rules file.

    A ``.yaml`` / ``.yml`` suffix or an existing file makes ``lang`` a path (``FileNotFoundError`` when it does not
    exist); a language code needs ``<code>.yaml`` in :func:`annotators_root` (``KeyError`` otherwise).
    """
    candidate = Path(lang)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        if not candidate.is_file():
            raise FileNotFoundError(f"{candidate}: no such rules file")
        return candidate
    path = annotators_root() / f"{lang}.yaml"
    if not path.is_file():
        raise KeyError(f"no annotator rules for language {str(lang)!r} (available: "
                       f"{', '.join(available_languages()) or 'none'}); add {path.name} to {annotators_root()}")
    return path


def _expand(path, values, lists, line) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            hint = " (quote it: YAML reads unquoted yes/no/on/off as booleans)" if isinstance(value, bool) else ""
            raise RulesError(path, line, f"expected a word (string), found {value!r}{hint}")
        if LIST_REF.match(value):
            if value[1:] not in lists:
                raise RulesError(path, line, f"unknown word list {value!r}; defined lists: {', '.join(lists) or 'none'}")
            out.extend(lists[value[1:]])
        else:
            out.append(value)
    return tuple(out)


def _substitute(path, pattern, lists, line):
    """Replace ``"$name"`` inside ``IN`` / ``NOT_IN`` predicates of a token pattern by the word list."""
    if isinstance(pattern, dict):
        out = {}
        for k, v in pattern.items():
            if k in ("IN", "NOT_IN") and isinstance(v, str):
                v = [v]
            if k in ("IN", "NOT_IN") and isinstance(v, list):
                out[k] = [w for item in v for w in
                          (_expand(path, [item], lists, line) if isinstance(item, str) and LIST_REF.match(item) else [item])]
            else:
                out[k] = _substitute(path, v, lists, line)
        return out
    if isinstance(pattern, list):
        return [_substitute(path, v, lists, line) for v in pattern]
    if isinstance(pattern, str) and LIST_REF.match(pattern):
        raise RulesError(path, line, f"word list {pattern!r} is only allowed inside IN / NOT_IN")
    return pattern


def _choice(path, spec, key, allowed, default):
    value = spec.get(key, default)
    if value not in allowed:
        raise RulesError(path, spec.key_lines.get(key, spec.line),
                         f"{key} must be one of {', '.join(allowed)}, found {value!r}")
    return value


def _feature(path, name, spec, lists, line, default_overlap=0.0) -> FeatureRule:
    if not isinstance(spec, dict):
        raise RulesError(path, line, f"feature {name!r}: expected a mapping of rule keys, found {spec!r}")
    unknown = set(spec) - FEATURE_KEYS
    if unknown:
        bad = sorted(unknown)[0]
        raise RulesError(path, spec.key_lines.get(bad, line),
                         f"feature {name!r}: unknown key {bad!r}; allowed: {', '.join(sorted(FEATURE_KEYS))}")
    words = _expand(path, spec.get("words", []), lists, spec.key_lines.get("words", line))
    compiled = _patterns(path, spec, "patterns", lists, line)
    exceptions = _patterns(path, spec, "except", lists, line)
    entities = spec.get("entities")
    if entities is not None:
        entities = tuple(entities) if isinstance(entities, list) else ()
    derivation = None
    if "derivation" in spec:
        dspec = spec["derivation"]
        dline = spec.key_lines.get("derivation", line)
        if not isinstance(dspec, dict) or set(dspec) - DERIVATION_KEYS:
            raise RulesError(path, dline, f"derivation must be a mapping with keys from {sorted(DERIVATION_KEYS)}")
        known = dspec.get("known_base", False)
        if not isinstance(known, (bool, list)):
            raise RulesError(path, dline, "derivation known_base must be true, false or a list of parts of speech, "
                             f"found {known!r}")
        derivation = Derivation(**{k: tuple(_expand(path, v, lists, dline)) if isinstance(v, list) else v
                                   for k, v in dspec.items() if k != "known_base"})
        if known is not False:
            derivation = replace(derivation, known_base=derivation.pos if known is True else tuple(known))
    min_count = spec.get("min_count", 1)
    if not isinstance(min_count, int) or min_count < 1:
        raise RulesError(path, spec.key_lines.get("min_count", line), f"min_count must be an integer >= 1, found {min_count!r}")
    min_overlap = _overlap(path, spec, default_overlap, line)
    unless_swapped = spec.get("unless_swapped")
    if unless_swapped is not None:
        try:
            unless_swapped = canonical_fine(str(unless_swapped))
        except UnknownCategoryError as err:
            raise RulesError(path, spec.key_lines.get("unless_swapped", line), str(err)) from None
    if not (words or compiled or entities is not None or derivation):
        raise RulesError(path, line, f"feature {name!r} has no evidence: give words, patterns, entities or derivation")
    return FeatureRule(name=name, line=line, pair=_choice(path, spec, "pair", PAIR_MODES, "either"),
                       key=_choice(path, spec, "key", KEY_MODES, "lemma"), min_count=min_count,
                       match=_choice(path, spec, "match", MATCH_ATTRS, "lower"), words=words,
                       patterns=compiled, entities=entities, derivation=derivation,
                       exceptions=exceptions, min_overlap=min_overlap, unless_swapped=unless_swapped)


def _patterns(path, spec, key, lists, line) -> dict:
    patterns = spec.get(key, {}) or {}
    if not isinstance(patterns, dict):
        raise RulesError(path, spec.key_lines.get(key, line), f"{key} must map a pattern name to a list of token specs")
    compiled = {}
    for pname, pattern in patterns.items():
        pline = patterns.key_lines.get(pname, line) if hasattr(patterns, "key_lines") else line
        if not isinstance(pattern, list) or not pattern or not all(isinstance(t, dict) for t in pattern):
            raise RulesError(path, pline, f"pattern {pname!r}: expected a list of token specs like [{{LOWER: not}}]")
        compiled[str(pname)] = _substitute(path, _plain(pattern), lists, pline)
    return compiled


def _overlap(path, spec, default, line) -> float:
    value = spec.get("min_overlap", default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise RulesError(path, spec.key_lines.get("min_overlap", line),
                         f"min_overlap must be a number from 0 to 1, found {value!r}")
    return float(value)


def load_rules(lang: str | Path) -> RuleSet:
    """Parse and validate a rules file.

    Parameters
    ----------
    lang : str or Path
        A language code with a bundled file (``"en"``) or the path of a ``.yaml`` rules file.

    Returns
    -------
    RuleSet

    Raises
    ------
    RulesError
        Malformed YAML, unknown keys, unknown feature names (with suggestions), unknown word lists;
        the message names the file and line.
    """
    path = rules_path(lang)
    try:
        doc = load_yaml_lines(path)
    except YAMLLineError as err:
        raise RulesError(path, err.line, f"invalid YAML: {err.problem}") from None
    if not isinstance(doc, dict):
        raise RulesError(path, 1, "expected a mapping with keys language, backend, lists, features")
    unknown = set(doc) - TOP_KEYS
    if unknown:
        bad = sorted(unknown)[0]
        raise RulesError(path, doc.key_lines.get(bad), f"unknown top-level key {bad!r}; allowed: {', '.join(sorted(TOP_KEYS))}")
    for required in ("language", "backend", "features"):
        if required not in doc:
            raise RulesError(path, 1, f"missing required key {required!r}")
    backend = _choice(path, doc, "backend", BACKENDS, None)
    if backend == "spacy" and not doc.get("model"):
        raise RulesError(path, doc.key_lines["backend"], "backend 'spacy' needs model: <installed spaCy pipeline>")
    lists = {}
    for lname, words in (doc.get("lists") or {}).items():
        if not isinstance(words, list):
            raise RulesError(path, doc["lists"].key_lines.get(lname), f"list {lname!r}: expected a list of words")
        lists[lname] = _expand(path, words, lists, doc["lists"].key_lines.get(lname))
    ner = doc.get("ner")
    if ner is not None and (backend == "spacy" or ner not in NER_RECOGNISERS):
        raise RulesError(path, doc.key_lines.get("ner"),
                         f"ner: {ner!r} is not an entity recogniser a {backend!r} pipeline can add "
                         f"(known: {', '.join(NER_RECOGNISERS)}; a spaCy pipeline brings its own 'ner')")
    default_overlap = _overlap(path, doc, 0.0, 1)
    features = {}
    for fname, spec in (doc["features"] or {}).items():
        fline = doc["features"].key_lines.get(fname)
        try:
            canonical = canonical_fine(str(fname))
        except UnknownCategoryError as err:
            raise RulesError(path, fline, str(err)) from None
        if canonical in features:
            raise RulesError(path, fline, f"feature {canonical!r} defined twice")
        features[canonical] = _feature(path, canonical, spec, lists, fline, default_overlap)
    for rule in features.values():
        if rule.unless_swapped is not None and rule.unless_swapped not in features:
            raise RulesError(path, rule.line, f"feature {rule.name!r}: unless_swapped names {rule.unless_swapped!r}, "
                             "which this file does not define")
    return RuleSet(path=str(path), language=str(doc["language"]), backend=backend, model=doc.get("model"),
                   exclude=tuple(doc.get("exclude") or ()), lists=lists, features=features, ner=ner)
