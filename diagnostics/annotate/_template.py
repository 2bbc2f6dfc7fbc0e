"""A starting rules file for a new language: ``diagnostics annotate init LANG``.

The backend is chosen by what is installed for the language (a trained spaCy pipeline, pymorphy3 with the language's
dictionary package, HanTa for German, simplemma), never by falling back to another language's analyser. Every
feature the bundled rules detect is in the file: the ones the backend can find without word lists (numbers,
names, and with a morphological analyser case, voice and tense) are active, the others are commented out, each with an
English example of what to list, ready to translate and uncomment.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import util
from pathlib import Path

from ..core.errors import UserInputError

#: The features of the bundled rules files, in the order they list them: the study's 15 annotation features plus
#: Double negation, Universal, Existential and Nominalization.
TEMPLATE_FEATURES = ("Negation", "Double negation", "Morphological negation", "Quantifiers", "Universal",
                     "Existential", "Conjunction", "Disjunction", "Conditionals", "Temporal", "Intervals/Numbers",
                     "Named entities", "Anaphora/Coreference", "Relative clauses", "Datives", "Genitives/Partitives",
                     "Active/Passive", "Factivity", "Nominalization")

#: Commented English example per feature: what the rule's evidence is, as lines of YAML under the feature.
_EXAMPLES = {
    "Negation": ("words that negate", ["pair: differ", "words: [$negators]"]),
    "Double negation": ("two negators in one sentence", ["pair: differ", "min_count: 2", "words: [$negators]"]),
    "Morphological negation": ("a negative prefix on a word the other sentence has bare (un-happy / happy)",
                               ["pair: differ", "derivation:", "  prefixes: [un, in, im, non, dis]",
                                "  min_length: 4"]),
    "Quantifiers": ("one quantifier replaced by another (all -> most)",
                    ["pair: swap", "words: [$universal, $existential, most, many, few, several, none]"]),
    "Universal": ("universal quantifiers", ["pair: differ", "unless_swapped: Quantifiers", "words: [$universal]"]),
    "Existential": ("existential quantifiers", ["pair: differ", "unless_swapped: Quantifiers",
                                                "words: [$existential]"]),
    "Conjunction": ("coordinating 'and'", ["pair: differ", "words: [and, \"as well as\", both, also, but]"]),
    "Disjunction": ("'or'", ["pair: differ", "words: [or, either, whether]"]),
    "Conditionals": ("conditional conjunctions",
                     ["pair: differ", "words: [if, unless, \"only if\", \"provided that\", \"as long as\"]"]),
    "Temporal": ("temporal connectives and tense", ["pair: swap", "key: pattern",
                                                    "words: [before, after, while, until, since, already, still]"]),
    "Intervals/Numbers": ("numbers and interval phrases", ["pair: swap", "key: lower",
                                                           "words: [\"more than\", \"at least\", half, dozen]"]),
    "Named entities": ("names", ["pair: swap", "entities: [PERSON, ORG, GPE, LOC]"]),
    "Anaphora/Coreference": ("pronouns", ["pair: differ", "key: lower", "patterns:",
                                          "  pronoun: [{LOWER: {IN: $pronouns}}]"]),
    "Relative clauses": ("a relative pronoun", ["pair: differ", "key: pattern", "patterns:",
                                                "  relative: [{LOWER: {IN: [which, who, whose, whom]}}]"]),
    "Datives": ("a recipient (gave him the book, gave it to her)",
                ["pair: differ", "key: pattern", "patterns:",
                 "  to_person: [{LOWER: to}, {LOWER: {IN: [him, her, them, me, us]}}]"]),
    "Genitives/Partitives": ("possessives and partitives ('s, of)",
                             ["pair: swap", "key: pattern", "patterns:", "  of_phrase: [{POS: NOUN}, {LOWER: of}]"]),
    "Active/Passive": ("a passive (was built by)", ["pair: differ", "key: pattern", "patterns:",
                                                    "  be_participle: [{LEMMA: be}, {TAG: VBN}]"]),
    "Factivity": ("verbs that presuppose or deny their complement",
                  ["pair: differ", "match: lemma", "words: [know, realize, regret, forget, discover, pretend]"]),
    "Nominalization": ("a noun derived from a verb the other sentence has (destruction / destroy)",
                       ["pair: differ", "derivation:", "  suffixes: [tion, ment, ance, ence, ing, al]", "  stem: 4",
                        "  min_length: 3"]),
}

_LISTS = {
    "negators": "not, never, \"no one\", nobody, nothing, none, nowhere, without",
    "universal": "all, every, each, always, everyone, everything",
    "existential": "some, someone, something, \"there is\", \"at least one\"",
    "pronouns": "he, she, it, they, him, her, them, his, its, their",
}


@dataclass(frozen=True)
class Backend:
    """The analyser a new language's rules use, and what it gives the rules.

    Attributes
    ----------
    name : str
        A backend of ``annotators/README.md`` (``spacy``, ``pymorphy3``, ``hanta``, ``simplemma``, ``blank``).
    model : str or None
        Its ``model:`` (a spaCy pipeline, a HanTa model); None when the language is enough.
    source : str
        Where it comes from (the installed package), for the file's header.
    morphology : bool
        Tokens carry UD case, voice and tense (``MORPH``).
    entities : bool
        The pipeline finds named entities (``doc.ents``).
    """

    name: str
    model: str | None
    source: str
    morphology: bool = False
    entities: bool = False


def _spacy_pipeline(lang: str) -> Backend | None:
    """An installed trained spaCy pipeline for ``lang``, if any (the first by name)."""
    import spacy.util

    for name in sorted(spacy.util.get_installed_models()):
        meta = spacy.util.get_model_meta(spacy.util.get_package_path(name))
        if meta.get("lang") == lang:
            pipes = set(meta.get("pipeline", ()))
            return Backend("spacy", name, f"the installed spaCy pipeline {name}",
                           morphology="morphologizer" in pipes, entities="ner" in pipes)
    return None


def _simplemma_languages() -> frozenset[str]:
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return frozenset(SUPPORTED_LANGUAGES)


def _spacy_knows(lang: str) -> bool:
    import spacy.util

    try:
        spacy.util.get_lang_class(lang)
    except ImportError:
        return False
    return True


def available_backends(lang: str) -> list[Backend]:
    """The backends installed here that can analyse ``lang``, best first.

    Parameters
    ----------
    lang : str
        ISO 639-1 code.

    Returns
    -------
    list of Backend
        A trained spaCy pipeline; pymorphy3 when its dictionary package for ``lang`` is installed; HanTa for German;
        simplemma when it knows ``lang``. Empty when none serves it (``blank`` is never chosen for you).
    """
    found = []
    spacy_model = _spacy_pipeline(lang)
    if spacy_model is not None:
        found.append(spacy_model)
    if not _spacy_knows(lang):  # the other backends tokenise with spacy.blank(lang)
        return found
    if util.find_spec(f"pymorphy3_dicts_{lang}") is not None:
        found.append(Backend("pymorphy3", None, f"pymorphy3 with its dictionary package pymorphy3-dicts-{lang}",
                             morphology=True))
    if lang == "de" and util.find_spec("HanTa") is not None:
        found.append(Backend("hanta", "morphmodel_ger.pgz", "the HanTa tagger (German model)"))
    if lang in _simplemma_languages():
        found.append(Backend("simplemma", None, "simplemma lemmas (no tagger: word lists and surface patterns)"))
    return found


def choose_backend(lang: str, name: str | None = None) -> Backend:
    """The backend for a new language: ``name`` when given and it serves ``lang``, else the best installed one.

    Raises
    ------
    UserInputError
        One line: no installed backend serves ``lang`` (or the one asked for does not), with what would.
    """
    if name == "blank":
        if not _spacy_knows(lang):
            raise UserInputError(f"backend 'blank' cannot serve {lang!r}: spaCy has no tokeniser for that code")
        return Backend("blank", None, "spacy.blank tokenisation only (lemma = lower-cased form)")
    found = available_backends(lang)
    if name is not None:
        chosen = next((b for b in found if b.name == name), None)
        if chosen is None:
            have = ", ".join(b.name for b in found) or "none"
            raise UserInputError(f"backend {name!r} cannot serve {lang!r} here (installed for {lang!r}: {have}); "
                                 f"{_how_to_serve(lang, name)}")
        return chosen
    if not found:
        raise UserInputError(f"no installed backend serves {lang!r}: no spaCy pipeline for it, no pymorphy3 dictionary "
                             f"(pymorphy3-dicts-{lang}), and simplemma does not know it; install one, or start "
                             "from tokens alone with --backend blank")
    return found[0]


def _how_to_serve(lang: str, name: str) -> str:
    if name == "pymorphy3":
        return f"it needs the dictionary package pymorphy3-dicts-{lang}"
    if name == "spacy":
        return f"it needs a trained spaCy pipeline for {lang!r} installed as a pip package"
    if name == "hanta":
        return "HanTa is used for German (de) only"
    return "simplemma does not know that language" if name == "simplemma" else f"unknown backend {name!r}"


def _active(feature: str, backend: Backend) -> list[str] | None:
    """The rule lines a backend can use for ``feature`` without any word list, or None."""
    morph = backend.morphology
    if feature == "Intervals/Numbers":
        return ["pair: swap", "key: lower", "patterns:", "  number: [{LIKE_NUM: true}]"]
    if feature == "Named entities":
        if backend.entities:
            return ["pair: swap", "entities: []"]
        return ["pair: swap", "key: lower", "patterns:",
                "  # a heuristic without an entity recogniser: capitalised words that do not start a sentence",
                "  title_case: [{IS_TITLE: true, IS_SENT_START: false, IS_ALPHA: true}]",
                "  acronym: [{IS_UPPER: true, IS_ALPHA: true, LENGTH: {\">=\": 2}}]"]
    if feature == "Datives" and morph:
        return ["pair: differ", "key: pattern", "patterns:",
                "  dative: [{POS: {IN: [NOUN, PROPN, PRON]}, MORPH: {IS_SUPERSET: [\"Case=Dat\"]}}]"]
    if feature == "Genitives/Partitives" and morph:
        return ["pair: swap", "key: pattern", "patterns:",
                "  genitive: [{POS: {IN: [NOUN, PROPN]}, MORPH: {IS_SUPERSET: [\"Case=Gen\"]}}]"]
    if feature == "Active/Passive" and morph:
        return ["pair: differ", "key: pattern", "patterns:", "  passive: [{MORPH: {IS_SUPERSET: [\"Voice=Pass\"]}}]"]
    if feature == "Temporal" and morph:
        return ["pair: swap", "key: pattern", "patterns:", "  past: [{MORPH: {IS_SUPERSET: [\"Tense=Past\"]}}]",
                "  future: [{MORPH: {IS_SUPERSET: [\"Tense=Fut\"]}}]"]
    if feature == "Anaphora/Coreference" and backend.name in ("spacy", "pymorphy3", "hanta"):
        return ["pair: differ", "key: lower", "patterns:", "  pronoun: [{POS: PRON}]"]
    return None


def template_text(lang: str, backend: Backend) -> str:
    """The rules file for ``lang`` analysed by ``backend``: every feature of :data:`TEMPLATE_FEATURES`.

    Parameters
    ----------
    lang : str
        ISO 639-1 code (``language:``).
    backend : Backend
        From :func:`choose_backend`.

    Returns
    -------
    str
        YAML that :func:`diagnostics.annotate.load_rules` reads as it is; commented features carry an English
        example of their evidence, to translate and uncomment.
    """
    lines = [f"# Diagnostic-feature rules for {lang!r}, started by `diagnostics annotate init {lang}`.",
             "# Format: annotators/README.md. Active features need no word lists; the commented ones show an English",
             "# example of their evidence: list this language's words, uncomment, and check the result with",
             f"# `diagnostics annotate run --lang {lang}.yaml PAIRS OUT` (and `annotate evaluate --lang {lang}.yaml",
             "# --path TAGGED` where a diagnostic set with gold tags exists).",
             f"language: {lang}", f"backend: {backend.name}"]
    if backend.model:
        lines.append(f"model: {backend.model}")
    lines += [f"description: {json.dumps(backend.source, ensure_ascii=False)}", "", "lists:",
              "  # named word lists, used as $name below; English examples to replace:"]
    lines += [f"  # {name}: [{words}]" for name, words in _LISTS.items()]
    lines += ["", "features:"]
    for feature in TEMPLATE_FEATURES:
        what, example = _EXAMPLES[feature]
        active = _active(feature, backend)
        if active is not None:
            extra = [line for line in example if not line.startswith(("pair:", "key:", "unless_swapped:"))]
            lines += [f"  {feature}:", f"    # {what}; to add, e.g. in English:"]
            lines += [f"    #   {line}" for line in extra]
            lines += [f"    {line}" for line in active]
        else:
            lines.append(f"  # {feature}:  ({what})")
            lines += [f"  #   {line}" for line in example]
    return "\n".join(lines) + "\n"


def write_template(lang: str, out: str | Path | None = None, backend: str | None = None,
                   force: bool = False) -> tuple[Path, Backend]:
    """Write the starting rules file of ``lang`` (default ``./<lang>.yaml``) and check that it loads.

    Parameters
    ----------
    lang : str
        ISO 639-1 code.
    out : str or Path, optional
        Where to write; an existing file is kept unless ``force``.
    backend : str, optional
        A backend to use instead of the best installed one.
    force : bool
        Overwrite ``out``.

    Returns
    -------
    (Path, Backend)
        The file written and its backend.

    Raises
    ------
    UserInputError
        A language code that is not a plain ISO code, no backend for it, or ``out`` exists.
    """
    from ._rules import load_rules

    if not (lang.isascii() and lang.isalpha() and lang.islower() and 2 <= len(lang) <= 3):
        raise UserInputError(f"LANG: expected an ISO 639 code such as uk or es, found {lang!r}")
    chosen = choose_backend(lang, backend)
    path = Path(out) if out is not None else Path(f"{lang}.yaml")
    if path.suffix not in (".yaml", ".yml"):
        raise UserInputError(f"--out: expected a .yaml file, found {str(path)!r}")
    if path.exists() and not force:
        raise UserInputError(f"{path} exists: pass --force to overwrite it, or --out another file")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(template_text(lang, chosen), encoding="utf-8")
    load_rules(path)  # the file as written is a valid rules file
    return path, chosen
